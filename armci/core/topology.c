#include "core/topology.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/error.h"
#include "core/memstat.h"
#include "core/runtime.h"
#include "core/util.h"

struct topology topo;

/* Node of each rank: by ARMCI_NODE_SIZE, or by host through MPI. */
static void assign_nodes(int *node_of)
{
    if (cfg.node_size > 0) {
        for (int r = 0; r < rt.nprocs; r++)
            node_of[r] = r / cfg.node_size;
        return;
    }

    MPI_Comm host;
    MPI_Comm_split_type(rt.comm, MPI_COMM_TYPE_SHARED, rt.me, MPI_INFO_NULL, &host);
    int host_leader = rt.me;
    MPI_Allreduce(MPI_IN_PLACE, &host_leader, 1, MPI_INT, MPI_MIN, host);
    MPI_Comm_free(&host);

    int *leader_of = xmalloc(sizeof(int) * rt.nprocs);
    MPI_Allgather(&host_leader, 1, MPI_INT, leader_of, 1, MPI_INT, rt.comm);
    /* Number hosts in the order of their lowest rank. */
    int next = 0;
    for (int r = 0; r < rt.nprocs; r++)
        node_of[r] = leader_of[r] == r ? next++ : node_of[leader_of[r]];
    free(leader_of);
}

void topo_build(struct topology *t, const int *node_of, int n)
{
    t->nprocs = n;
    t->num_nodes = 0;
    bool ranges = true; /* every node a range of consecutive ranks */
    for (int r = 0; r < n; r++) {
        if (node_of[r] + 1 > t->num_nodes)
            t->num_nodes = node_of[r] + 1;
        if (r > 0 && node_of[r] != node_of[r - 1] && node_of[r] != node_of[r - 1] + 1)
            ranges = false;
    }

    t->node_first = xcalloc((size_t)t->num_nodes + 1, sizeof(int));
    for (int r = 0; r < n; r++)
        t->node_first[node_of[r] + 1]++;
    /* Equal ranges (the last may be smaller): a division, no table. */
    int block = t->node_first[1];
    bool equal = ranges;
    for (int i = 1; i < t->num_nodes; i++)
        equal &= t->node_first[i + 1] == block ||
                 (i == t->num_nodes - 1 && t->node_first[i + 1] < block);
    for (int i = 0; i < t->num_nodes; i++)
        t->node_first[i + 1] += t->node_first[i];
    t->block = 0;
    t->node_of = t->local_of = t->node_ranks = NULL;
    if (equal) {
        t->block = block;
        free(t->node_first);
        t->node_first = NULL;
        return;
    }
    if (ranges)
        return;

    t->node_of = xmalloc(sizeof(int) * (size_t)n);
    t->local_of = xmalloc(sizeof(int) * (size_t)n);
    t->node_ranks = xmalloc(sizeof(int) * (size_t)n);
    int *fill = xcalloc((size_t)t->num_nodes, sizeof(int));
    for (int r = 0; r < n; r++) {
        int node = node_of[r];
        t->node_of[r] = node;
        t->local_of[r] = fill[node];
        t->node_ranks[t->node_first[node] + fill[node]++] = r;
    }
    free(fill);
}

long topo_map_bytes(const struct topology *t)
{
    long bytes = t->node_first ? (long)sizeof(int) * (t->num_nodes + 1) : 0;
    if (t->host_names)
        bytes += (long)sizeof(*t->host_names) * t->num_nodes;
    if (t->node_of)
        bytes += 3 * (long)sizeof(int) * t->nprocs;
    return bytes;
}

void topo_free_maps(struct topology *t)
{
    free(t->node_first);
    free(t->node_of);
    free(t->local_of);
    free(t->node_ranks);
    free(t->host_names);
    t->node_first = t->node_of = t->local_of = t->node_ranks = NULL;
    t->host_names = NULL;
}

/* Nodes that are hosts: each master's host name, gathered over the masters and passed on
 * within each node. */
static void gather_host_names(void)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    topo.host_names = xcalloc((size_t)topo.num_nodes, sizeof(*topo.host_names));
    snprintf(topo.host_names[topo.my_node], TOPO_HOST_CHARS, "%s", mine);
    if (topo.master_comm != MPI_COMM_NULL)
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, topo.host_names, TOPO_HOST_CHARS,
                      MPI_CHAR, topo.master_comm);
    MPI_Bcast(topo.host_names, TOPO_HOST_CHARS * topo.num_nodes, MPI_CHAR, 0, topo.node_comm);
}

void topo_describe_node(int node, char *buf, size_t len)
{
    int first = topo_node_master(node), n = topo_node_nprocs(node);
    char ranks[48];
    if (n == 1)
        snprintf(ranks, sizeof(ranks), "rank %d", first);
    else
        snprintf(ranks, sizeof(ranks), "%d ranks, the lowest %d", n, first);
    if (topo.host_names)
        snprintf(buf, len, "node %d (host %s, %s)", node, topo.host_names[node], ranks);
    else
        snprintf(buf, len, "node %d (%s, a virtual node of this host)", node, ranks);
}

void topo_init(void)
{
    int *node_of = xmalloc(sizeof(int) * (size_t)rt.nprocs);
    assign_nodes(node_of);
    topo_build(&topo, node_of, rt.nprocs);
    free(node_of);

    topo.my_node = topo_node_of(rt.me);
    topo.my_local = topo_local_index(rt.me);
    MPI_Comm_split(rt.comm, topo.my_node, rt.me, &topo.node_comm);
    MPI_Comm_split(rt.comm, topo_is_master() ? 0 : MPI_UNDEFINED, rt.me, &topo.master_comm);
    if (cfg.node_size <= 0)
        gather_host_names();

    memstat_add(MEM_TOPOLOGY, topo_map_bytes(&topo));
    armci_log("node %d of %d, local index %d of %d%s", topo.my_node, topo.num_nodes, topo.my_local,
              topo_node_nprocs(topo.my_node), topo_is_master() ? " (master)" : "");
}

void topo_fini(void)
{
    if (topo.master_comm != MPI_COMM_NULL)
        MPI_Comm_free(&topo.master_comm);
    MPI_Comm_free(&topo.node_comm);
    memstat_add(MEM_TOPOLOGY, -topo_map_bytes(&topo));
    topo_free_maps(&topo);
    topo = (struct topology){0};
}
