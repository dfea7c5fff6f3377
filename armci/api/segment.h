/*
 * ARMCI memory segments: the blocks ARMCI_Malloc hands out, and the
 * translation from (process, address) to where the bytes really are.
 *
 * One collective allocation is one segment. On each node, the blocks of that
 * node's members live in one shared-memory object mapped by all of them;
 * the node's data server has it mapped and registered too (remote access).
 *
 * Addresses: the members first try to map their nodes' objects at one
 * address (symmetric: a candidate all of them agree on, a few tries); then
 * ptr_arr[p] is that address plus p's place in its node's object, the same
 * in every member and p's own address of its block. Failing that, in
 * process q, ptr_arr[p] is q's own mapping of p's block when p is on q's
 * node, and p's own address of its block otherwise. Either way same-node
 * blocks are directly usable, as in classic ARMCI. RDMA and data-server
 * requests use the address of the block in the data server's mapping
 * ("server address"). With a symmetric mapping every data server is asked to
 * map its node's copy at that address plus L (the largest node object, page
 * aligned; the members voted for room for both): if all did, the segment is
 * "server-symmetric" and a block's server address is its address plus L on
 * every node, so the segment keeps only an rkey per node.
 */
#ifndef ARMCI_API_SEGMENT_H
#define ARMCI_API_SEGMENT_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/block_index.h"
#include "armci.h"
#include "transport/target.h"

struct net_mr;

/*
 * What is per member (each block's size and place in its node's object, its
 * address unless the mapping is symmetric) is in the segment's block index,
 * kept once per node and empty for a regular array (block_index.h); the rest
 * of a segment is per node (flat arrays, one allocation, by ascending node:
 * 4 B a node when server-symmetric and every node has members), and my own
 * block.
 */
struct segment {
    uint64_t id;   /* job-unique */
    MPI_Comm comm; /* the group's communicator (not owned) */
    uint32_t slot; /* in the segment table */
    int nmembers;
    int my_member;     /* my index in the group */
    int nnodes;        /* nodes with members */
    uintptr_t my_view; /* my block, as ARMCI_Malloc returned it */
    size_t my_bytes;
    uint32_t *rkeys;        /* [nnodes]: each node's object in its data server; 0 without verbs */
    int *node_ids;          /* [nnodes] ascending; NULL when every node has members (k is k) */
    uint64_t *server_bases; /* [nnodes] where each data server mapped its object; NULL when
                             * server-symmetric */
    uint64_t server_offset; /* server-symmetric: a block's server address minus its address */
    void *map;              /* my node's object, mapped here */
    size_t map_size;
    struct net_mr *local_mr; /* my registration of map: lkeys for zero-copy */
    bool server_mapped_here; /* I asked the data server to map it, so I unmap it */
    struct block_index index;
};

void seg_fini(void);

/* ARMCI_Malloc(_group): collective over group (NULL = world). */
int seg_malloc(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group);
/* The same, for an array of ARMCI mutexes: the data server accepts lock requests only there.
 * *id names the segment for seg_block. */
int seg_malloc_locks(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                     uint64_t *id);
/* ARMCI_Free(_group): collective; ptr is my block or NULL if I asked for 0 bytes. */
int seg_free(const char *call, void *ptr, ARMCI_Group *group);

/*
 * Resolves [addr, addr + len) of process proc; aborts, naming call and arg,
 * unless the range lies inside one ARMCI block of proc.
 */
void seg_resolve(const char *call, const char *arg, int proc, const void *addr, size_t len,
                 struct target *out);

/* Process proc's block of segment id (start as ptr_arr gives it here): false if it has none. */
bool seg_block(uint64_t id, int proc, void **start, size_t *bytes);

/* The block index of the segment in which my block starts at my_block, or NULL (tests). */
const struct block_index *seg_index_of(const void *my_block);

/* The segment in which my block starts at my_block, or NULL (tests). */
const struct segment *seg_of(const void *my_block);

/* Bytes of a segment's per-node arrays (with the segment itself: the report's `segments`). */
size_t seg_node_bytes(const struct segment *s);

/* Bytes held by the segment table and by the block index (tests, memory report). */
long seg_table_bytes(void);
long seg_index_bytes(void);

/* ARMCI_Malloc_local / ARMCI_Free_local. */
void *seg_malloc_local(const char *call, armci_size_t bytes);
int seg_free_local(const char *call, void *ptr);

#endif
