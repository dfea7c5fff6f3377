#include "core/topology.h"

#include <stdlib.h>

#include "core/config.h"
#include "core/error.h"
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

void topo_init(void)
{
    int n = rt.nprocs;
    topo.node_of = xmalloc(sizeof(int) * n);
    topo.local_of = xmalloc(sizeof(int) * n);
    topo.node_ranks = xmalloc(sizeof(int) * n);
    assign_nodes(topo.node_of);

    topo.num_nodes = 0;
    for (int r = 0; r < n; r++)
        if (topo.node_of[r] + 1 > topo.num_nodes)
            topo.num_nodes = topo.node_of[r] + 1;

    topo.node_first = xcalloc(topo.num_nodes + 1, sizeof(int));
    for (int r = 0; r < n; r++)
        topo.node_first[topo.node_of[r] + 1]++;
    for (int i = 0; i < topo.num_nodes; i++)
        topo.node_first[i + 1] += topo.node_first[i];

    int *fill = xcalloc(topo.num_nodes, sizeof(int));
    for (int r = 0; r < n; r++) {
        int node = topo.node_of[r];
        topo.local_of[r] = fill[node];
        topo.node_ranks[topo.node_first[node] + fill[node]++] = r;
    }
    free(fill);

    topo.my_node = topo.node_of[rt.me];
    topo.my_local = topo.local_of[rt.me];
    MPI_Comm_split(rt.comm, topo.my_node, rt.me, &topo.node_comm);
    MPI_Comm_split(rt.comm, topo_is_master() ? 0 : MPI_UNDEFINED, rt.me, &topo.master_comm);

    armci_log("node %d of %d, local index %d of %d%s", topo.my_node, topo.num_nodes, topo.my_local,
              topo_node_nprocs(topo.my_node), topo_is_master() ? " (master)" : "");
}

void topo_fini(void)
{
    if (topo.master_comm != MPI_COMM_NULL)
        MPI_Comm_free(&topo.master_comm);
    MPI_Comm_free(&topo.node_comm);
    free(topo.node_of);
    free(topo.local_of);
    free(topo.node_first);
    free(topo.node_ranks);
    topo = (struct topology){0};
}
