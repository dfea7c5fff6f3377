/*
 * The data server's memory for the fuzz targets that run its request code
 * (ds: handlers.c over RC; dgram: dgram_server.c over UD), in arena.c: four
 * segments in one arena at a fixed address (FUZZ_DS_*, fuzz.h), so that
 * inputs can name them, mapped and registered through the real registry;
 * every other byte of the arena is a canary that ASan poisons (and that is
 * compared in builds without ASan). With them, the doubles of the runtime
 * that code needs: errors (a call that would end the job is a broken
 * invariant), allocation, the node's accumulate locks, shared memory and
 * memory registration. The world is two nodes of four ranks; the server is
 * node 0's.
 */
#ifndef ARMCI_FUZZ_ARENA_H
#define ARMCI_FUZZ_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataserver/registry.h"
#include "fuzz.h"
#include "verbs/memory.h"

#define ARENA_SIZE FUZZ_DS_ARENA_SIZE
#define CANARY     0xa5

struct fake_segment {
    const char *name;
    uint64_t seg_id;
    size_t offset;
    size_t size;
    enum registry_kind kind;
};

/* Sorted by offset: a page-aligned one, one ending on a page boundary but starting off it,
 * a lock block, a tiny one (in registry order: the canaries are the gaps between them). */
#define ARENA_NSEGS 4
extern const struct fake_segment arena_segs[ARENA_NSEGS];
extern uint8_t *arena; /* at FUZZ_DS_ARENA */

/* Maps the arena (or exits 77, a skip, when the address is taken), fills the segments with
 * a pattern, registers them and poisons the canaries. */
void arena_init(void);

/* Segments as every input starts: a pattern, free mutexes. */
void arena_reset(void);

/* The segments' contents now, and whether they still are. */
void arena_snapshot(void);
bool arena_unchanged(void);

/* Canaries intact (without ASan: with it, any access to one has already stopped the run),
 * no accumulate lock left held. */
void arena_check(void);

/* The registration holding [addr, addr + len), or NULL. */
const struct net_mr *arena_mr_holding(uint64_t addr, uint64_t len);

#endif
