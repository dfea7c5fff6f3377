/*
 * Inside api/: one segment's block index, kept once per node.
 *
 * A segment whose members all mapped their node's object at one address
 * (symmetric, segment.c) needs no member's address: p's block is at that
 * address plus its place in its node's object, in every process. When,
 * besides, every process of the world asked the same bytes (the usual
 * global array), the places follow from the ranks too, and the index keeps
 * nothing (regular). Otherwise runs (struct block_run) say where members'
 * blocks are, sorted by process: with a symmetric mapping a run covers the
 * processes that follow one another with equal blocks, one after another on
 * their node or one a node; without it, a run is one block, its address in
 * its owner's space beside it. The runs are the same in every process of a
 * node, so the segment's first member on the node writes them into an object
 * of the node's shared memory that the node's other members map, and each
 * counts a share (the report's `index` kind). A node with one member keeps
 * them in its private memory.
 */
#ifndef ARMCI_API_BLOCK_INDEX_H
#define ARMCI_API_BLOCK_INDEX_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mutant.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"

/* Blocks start on cache lines: fine for every ARMCI type and avoids false sharing. */
#define BLOCK_ALIGN CACHE_LINE

/*
 * A run of blocks as the index keeps it: processes proc, proc + 1, ... up to the next run's
 * proc (the last run: up to the index's end) each have a block of `bytes` (0: a gap, none of
 * them has one). The first is at `place` in its node's object; each next one follows the
 * previous on its node (stepped: place + the aligned bytes) or sits at the same place on its
 * own node (one process a node). The usual distributions (equal blocks, the first r processes
 * one element more, a grid's edge blocks smaller) are a few runs a node, or a few in all with
 * one process a node; a block of its own is a run of one.
 */
struct block_run {
    uint64_t bytes : 63;
    uint64_t stepped : 1;
    int32_t proc;
    uint32_t place; /* in BLOCK_ALIGN units */
};

/* One member's block as a lookup gives it. */
struct block {
    uintptr_t start; /* in its owner's address space (symmetric: in every member's) */
    uint64_t bytes;
    uint64_t offset; /* in its node's object */
};

struct block_index {
    uintptr_t base;   /* symmetric: every member's node object is mapped here; 0: not */
    uint64_t regular; /* > 0: every process of the world has a block of this size, no runs */
    /* [count], by process: shared mapping or private allocation; when not symmetric, runs
     * are of one block each and each one's start in its owner's address space follows them
     * (count uint64_t, 0 for a gap). */
    const struct block_run *runs;
    uint32_t count;
    int32_t end; /* one past the last process with a block */
    bool dense;  /* a run per process of the job, runs[p] is p's */
    bool shared; /* runs in a mapping of the node's shared memory */
    long held;   /* this process's share of the runs' bytes */
};

/* A regular segment: every process of the world, in rank order, asked `bytes` (> 0), and
 * every member mapped its node's object at base. Keeps nothing; not collective. */
void block_index_regular(struct block_index *ix, uintptr_t base, uint64_t bytes);
/*
 * Collective over node_group (the segment's members on this node): its rank 0 passes the
 * `count` runs, sorted by process, and (base 0: not symmetric) the starts beside them; the
 * others NULL; every member passes `end` and returns with them readable. `tag` names the
 * shared object (unique in the job for this node).
 */
void block_index_publish(struct block_index *ix, MPI_Comm node_group, const char *tag,
                         uintptr_t base, const struct block_run *runs, const uint64_t *starts,
                         uint32_t count, int32_t end);
/* Drops this process's view of the runs (not collective). */
void block_index_release(struct block_index *ix);

/* The position of the run holding proc, or count if none does. */
static inline uint32_t block_index_find(const struct block_index *ix, int proc)
{
    if (proc >= ix->end)
        return ix->count;
    if (ix->dense)
        return proc < 0 ? ix->count : (uint32_t)proc;
    uint32_t lo = 0, hi = ix->count; /* the first run beyond proc */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->runs[mid].proc <= proc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : ix->count;
}

/* Where proc's block (in run r, which holds it) is in its node's object, in BLOCK_ALIGN units. */
static inline uint64_t block_run_place(const struct block_run *r, int proc)
{
    uint64_t after = (uint64_t)(proc - r->proc);
#if ARMCI_MUTANT_IS(run_place_unstepped) /* the bug: every block of a run at the run's place */
    after = 0;
#endif
    return r->place +
           (r->stepped ? after * (align_up((size_t)r->bytes, BLOCK_ALIGN) / BLOCK_ALIGN) : 0);
}

/* Where a regular segment's block of proc (on node) is in its node's object: the node's lower
 * ranks' blocks before it, as segment.c lays them out. */
static inline uint64_t block_index_regular_offset(const struct block_index *ix, int proc, int node)
{
#if ARMCI_MUTANT_IS(regular_place_unaligned) /* the bug: blocks packed without alignment */
    return (uint64_t)topo_local_index_on(proc, node) * ix->regular;
#else
    return (uint64_t)topo_local_index_on(proc, node) * align_up((size_t)ix->regular, BLOCK_ALIGN);
#endif
}

/* The block of proc (a rank of node), false if it has none (every lookup: inline). */
static inline bool block_index_of(const struct block_index *ix, int proc, int node,
                                  struct block *out)
{
    if (ix->regular) {
        if ((unsigned)proc >= (unsigned)rt.nprocs)
            return false;
        uint64_t offset = block_index_regular_offset(ix, proc, node);
        *out = (struct block){.start = ix->base + offset, .bytes = ix->regular, .offset = offset};
        return true;
    }
    uint32_t i = block_index_find(ix, proc);
    if (i == ix->count || ix->runs[i].bytes == 0)
        return false;
    uint64_t offset = block_run_place(&ix->runs[i], proc) * BLOCK_ALIGN;
    const uint64_t *starts = (const uint64_t *)(ix->runs + ix->count);
    *out = (struct block){.start = ix->base ? ix->base + offset : starts[i],
                          .bytes = ix->runs[i].bytes,
                          .offset = offset};
    return true;
}

/* This process's shares of every live index (the report's `index` kind). */
long block_index_bytes(void);

#endif
