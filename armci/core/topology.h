/*
 * Nodes: the processes sharing a host, or with ARMCI_NODE_SIZE=k "virtual
 * nodes" of k consecutive ranks (the last one may be smaller). Between
 * nodes every byte travels through verbs; within a node, shared memory.
 * The lowest rank of a node is its master and runs its data server.
 *
 * The map costs memory in proportion to what it cannot compute: nodes of
 * `block` consecutive ranks (ARMCI_NODE_SIZE, or hosts filled in order with
 * the same number each) need no table; nodes of consecutive ranks of
 * different sizes need where each starts (node_first); only ranks of a
 * host that are not consecutive (round-robin placement) need per-rank arrays.
 */
#ifndef ARMCI_CORE_TOPOLOGY_H
#define ARMCI_CORE_TOPOLOGY_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#define TOPO_HOST_CHARS 48 /* a host name kept per node, truncated */

struct topology {
    int nprocs;
    int num_nodes;
    int my_node;
    int my_local;    /* my index within my node */
    int block;       /* > 0: node of rank r is r / block; 0: the tables below */
    int *node_first; /* [num_nodes + 1] start of each node in node_ranks (or in ranks) */
    /* Only when some node's ranks are not consecutive (NULL otherwise): */
    int *node_of;    /* [nprocs] node of each rank */
    int *local_of;   /* [nprocs] index of each rank within its node */
    int *node_ranks; /* [nprocs] ranks grouped by node, ascending within a node */
    /* [num_nodes] host name of each node when nodes are hosts (NULL for virtual nodes:
     * they all share this host), for messages that must name a node a user can find. */
    char (*host_names)[TOPO_HOST_CHARS];
    MPI_Comm node_comm;   /* my node's processes */
    MPI_Comm master_comm; /* one process per node; MPI_COMM_NULL on non-masters */
};

extern struct topology topo;

void topo_init(void);
/* "node N (host H, ranks a-b)": what error messages say of a node. */
void topo_describe_node(int node, char *buf, size_t len);
void topo_fini(void);

/*
 * Fills t (all but my_node, my_local and the communicators) from the node of
 * every rank, nodes numbered in the order of their lowest rank; topo_init's
 * work, apart for the tests.
 */
void topo_build(struct topology *t, const int *node_of, int nprocs);
void topo_free_maps(struct topology *t);
/* Bytes t's maps hold. */
long topo_map_bytes(const struct topology *t);

/* Node of a rank when nodes are ranges of consecutive ranks: the last one starting at or
 * before it. */
static inline int topo_node_in_ranges(const struct topology *t, int rank)
{
    int lo = 0, hi = t->num_nodes - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (t->node_first[mid] <= rank)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static inline int topo_node_of(int rank)
{
    if (topo.block > 0)
        return rank / topo.block;
    return topo.node_of ? topo.node_of[rank] : topo_node_in_ranges(&topo, rank);
}

static inline bool topo_same_node(int rank)
{
    return topo_node_of(rank) == topo.my_node;
}

static inline int topo_node_nprocs(int node)
{
    if (topo.block > 0) {
        int left = topo.nprocs - node * topo.block;
        return left < topo.block ? left : topo.block;
    }
    return topo.node_first[node + 1] - topo.node_first[node];
}

static inline int topo_node_rank(int node, int local)
{
    if (topo.block > 0)
        return node * topo.block + local;
    int i = topo.node_first[node] + local;
    return topo.node_ranks ? topo.node_ranks[i] : i;
}

static inline int topo_node_master(int node)
{
    return topo_node_rank(node, 0);
}

static inline bool topo_is_master(void)
{
    return topo.my_local == 0;
}

static inline int topo_local_index(int rank)
{
    if (topo.block > 0)
        return rank % topo.block;
    if (topo.local_of)
        return topo.local_of[rank];
    return rank - topo.node_first[topo_node_in_ranges(&topo, rank)];
}

/* The same when the caller knows rank's node: no division (a lookup's hot path). */
static inline int topo_local_index_on(int rank, int node)
{
    if (topo.block > 0)
        return rank - node * topo.block;
    if (topo.local_of)
        return topo.local_of[rank];
    return rank - topo.node_first[node];
}

#endif
