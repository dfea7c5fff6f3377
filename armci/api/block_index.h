/*
 * Inside api/: one segment's block index, kept once per node.
 *
 * A segment whose members all mapped their node's object at one address
 * (symmetric, segment.c) needs no member's address: p's block is at that
 * address plus its place in its node's object, in every process. When,
 * besides, every process of the world asked the same bytes (the usual
 * global array), the places follow from the ranks too, and the index keeps
 * nothing (regular). Otherwise a record says where one member's block is;
 * there is one per member that asked for more than 0 bytes, sorted by
 * process, and its address in its owner's space beside it when the mapping
 * is not symmetric. The records are the same in every process of a node, so
 * the segment's first member on the node writes them into an object of the
 * node's shared memory that the node's other members map, and each counts a
 * share (the report's `index` kind). A node with one member keeps them in
 * its private memory.
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

/* One member's block as the index keeps it. */
struct block_record {
    uint64_t bytes;
    uint32_t place; /* offset in its node's object, in BLOCK_ALIGN units */
    int32_t proc;
};

/* One member's block as a lookup gives it. */
struct block {
    uintptr_t start; /* in its owner's address space (symmetric: in every member's) */
    uint64_t bytes;
    uint64_t offset; /* in its node's object */
};

struct block_index {
    uintptr_t base;   /* symmetric: every member's node object is mapped here; 0: not */
    uint64_t regular; /* > 0: every process of the world has a block of this size, no records */
    /* [count], by process: shared mapping or private allocation; when not symmetric, each
     * block's start in its owner's address space follows them (count uint64_t). */
    const struct block_record *records;
    uint32_t count;
    bool shared; /* records in a mapping of the node's shared memory */
    long held;   /* this process's share of the records' bytes */
};

/* A regular segment: every process of the world, in rank order, asked `bytes` (> 0), and
 * every member mapped its node's object at base. Keeps nothing; not collective. */
void block_index_regular(struct block_index *ix, uintptr_t base, uint64_t bytes);
/*
 * Collective over node_group (the segment's members on this node): its rank 0 passes the
 * `count` records, sorted by process, and (base 0: not symmetric) the starts beside them;
 * the others NULL; every member returns with them readable. `tag` names the shared object
 * (unique in the job for this node).
 */
void block_index_publish(struct block_index *ix, MPI_Comm node_group, const char *tag,
                         uintptr_t base, const struct block_record *records, const uint64_t *starts,
                         uint32_t count);
/* Drops this process's view of the records (not collective). */
void block_index_release(struct block_index *ix);

/* The position of proc's record, or count if proc has no block. When every process of the
 * job has a block, the records are in rank order and proc's is at proc. */
static inline uint32_t block_index_find(const struct block_index *ix, int proc)
{
    if (ix->count == (uint32_t)rt.nprocs)
        return (uint32_t)proc;
    uint32_t lo = 0, hi = ix->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->records[mid].proc < proc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->count && ix->records[lo].proc == proc ? lo : ix->count;
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
    if (i == ix->count)
        return false;
    uint64_t offset = (uint64_t)ix->records[i].place * BLOCK_ALIGN;
    const uint64_t *starts = (const uint64_t *)(ix->records + ix->count);
    *out = (struct block){.start = ix->base ? ix->base + offset : starts[i],
                          .bytes = ix->records[i].bytes,
                          .offset = offset};
    return true;
}

/* This process's shares of every live index (the report's `index` kind). */
long block_index_bytes(void);

#endif
