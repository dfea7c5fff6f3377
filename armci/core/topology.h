/*
 * Nodes: the processes sharing a host, or with ARMCI_NODE_SIZE=k "virtual
 * nodes" of k consecutive ranks (the last one may be smaller). Between
 * nodes every byte travels through verbs; within a node, shared memory.
 * The lowest rank of a node is its master and runs its data server.
 */
#ifndef ARMCI_TOPOLOGY_H
#define ARMCI_TOPOLOGY_H

#include <mpi.h>
#include <stdbool.h>

struct topology {
    int num_nodes;
    int my_node;
    int my_local;         /* my index within my node */
    int *node_of;         /* [nprocs] node of each rank */
    int *local_of;        /* [nprocs] index of each rank within its node */
    int *node_first;      /* [num_nodes + 1] offsets into node_ranks */
    int *node_ranks;      /* ranks grouped by node, ascending within a node */
    MPI_Comm node_comm;   /* my node's processes */
    MPI_Comm master_comm; /* one process per node; MPI_COMM_NULL on non-masters */
};

extern struct topology topo;

void topo_init(void);
void topo_fini(void);

static inline int topo_node_of(int rank)
{
    return topo.node_of[rank];
}

static inline bool topo_same_node(int rank)
{
    return topo.node_of[rank] == topo.my_node;
}

static inline int topo_node_nprocs(int node)
{
    return topo.node_first[node + 1] - topo.node_first[node];
}

static inline int topo_node_rank(int node, int local)
{
    return topo.node_ranks[topo.node_first[node] + local];
}

static inline int topo_node_master(int node)
{
    return topo.node_ranks[topo.node_first[node]];
}

static inline bool topo_is_master(void)
{
    return topo.my_local == 0;
}

static inline int topo_local_index(int rank)
{
    return topo.local_of[rank];
}

#endif
