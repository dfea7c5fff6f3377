/*
 * Inside api/: one segment's block index, kept once per node.
 *
 * A record says where one member's block is; there is one per member that
 * asked for more than 0 bytes, sorted by process. The records are the same
 * in every process of a node, so the segment's first member on the node
 * writes them into an object of the node's shared memory that the node's
 * other members map, and each counts a share (the report's `index` kind).
 * A node with one member keeps them in its private memory.
 */
#ifndef ARMCI_API_BLOCK_INDEX_H
#define ARMCI_API_BLOCK_INDEX_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/runtime.h"

struct block {
    uint64_t start; /* in its owner's address space */
    uint64_t bytes;
    uint32_t place; /* offset in its node's object, in BLOCK_ALIGN units */
    int32_t proc;
};

struct block_index {
    const struct block *blocks; /* [count], by process: shared mapping or private allocation */
    uint32_t count;
    size_t mapped; /* bytes mapped when shared, 0 when private */
    long held;     /* this process's share of the records' bytes */
};

/*
 * Collective over node_group (the segment's members on this node): its rank 0 passes the
 * `count` records, sorted by process, the others NULL; every member returns with them
 * readable. `tag` names the shared object (unique in the job for this node).
 */
void block_index_publish(struct block_index *ix, MPI_Comm node_group, const char *tag,
                         const struct block *records, uint32_t count);
/* Drops this process's view of the records (not collective). */
void block_index_release(struct block_index *ix);
/* proc's record, or NULL if proc has no block (every lookup: inline). When every process
 * of the job has a block, the records are in rank order and proc's is at proc. */
static inline const struct block *block_index_of(const struct block_index *ix, int proc)
{
    if (ix->count == (uint32_t)rt.nprocs)
        return &ix->blocks[proc];
    uint32_t lo = 0, hi = ix->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->blocks[mid].proc < proc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->count && ix->blocks[lo].proc == proc ? &ix->blocks[lo] : NULL;
}

/* This process's shares of every live index (the report's `index` kind). */
long block_index_bytes(void);

#endif
