/*
 * The per-node control block, in shared memory mapped by every process of
 * the node (and used by its data server): accumulate locks and the flags of
 * the intra-node barrier. One cache line per entry so that processes
 * spinning on their own flag do not share lines.
 */
#ifndef ARMCI_CORE_NODE_SHARED_H
#define ARMCI_CORE_NODE_SHARED_H

#include <pthread.h>
#include <stdint.h>

#include "core/util.h"

struct node_lock {
    pthread_mutex_t mutex;
} __attribute__((aligned(CACHE_LINE)));

struct node_flag {
    volatile uint64_t value;
} __attribute__((aligned(CACHE_LINE)));

struct node_shared {
    int nprocs;
    struct node_flag barrier_release; /* barrier number the master has released */
    /*
     * Followed by, per process of the node (local index order):
     *   struct node_lock acc_lock[nprocs];   serialises accumulates into its memory
     *   struct node_flag barrier_arrive[nprocs];
     */
};

extern struct node_shared *node_shm;

/* Collective over the node; the master initialises the block. */
void node_shared_init(void);
void node_shared_fini(void);

struct node_flag *node_barrier_arrive(int local_index);

/*
 * Accumulates into the memory of the process with local index `local` are
 * serialised by its lock, whether they come from this node's processes or
 * from the data server on behalf of other nodes.
 */
void node_acc_lock(int local);
void node_acc_unlock(int local);

#endif
