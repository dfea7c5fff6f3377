/*
 * Static connection setup (the ODCM paper's "Original"): at init, every
 * process connects to the data server of every other node. QP numbers and
 * PSNs travel over MPI in two all-to-alls: clients to the node masters,
 * then the masters' answers back. Memory and time grow with the job. When
 * every Rmw goes through the device (verbs/atomics.h), each process connects
 * to its own node's server too (a loopback connection).
 */
#include "odcm/cm_static.h"

#include <stdlib.h>

#include "core/config.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "odcm/cm_server.h"
#include "odcm/conn_table.h"
#include "verbs/atomics.h"

struct static_record {
    struct verbs_addr addr;
    struct cm_terms terms;
    int32_t valid;
};

void cm_static_connect_all(void)
{
    int n = rt.nprocs;
    double begin = now_seconds();
    struct static_record *out = xcalloc((size_t)n, sizeof(*out));
    struct static_record *in = xcalloc((size_t)n, sizeof(*in));

    /* My client QPs, each addressed to the master of its node. */
    for (int node = 0; node < topo.num_nodes; node++) {
        if (node == topo.my_node && !rmw_route_loopback())
            continue;
        struct conn *c = client_conn_create(node);
        c->state = CONN_CONNECTING;
        c->setup_begin = begin;
        conn_table_insert(c);
        int master = topo_node_master(node);
        out[master] = (struct static_record){verbs_my_addr(c->qp->qp_num, c->psn), {0, 0, 0}, 1};
    }
    MPI_Alltoall(out, sizeof(*out), MPI_BYTE, in, sizeof(*in), MPI_BYTE, rt.comm);

    /* Masters: one server QP per client of another node, answered in kind. */
    for (int p = 0; p < n; p++)
        out[p].valid = 0;
    if (topo_is_master()) {
        for (int p = 0; p < n; p++) {
            if (!in[p].valid)
                continue;
            struct cm_terms terms;
            struct verbs_addr addr = cm_server_accept_static(p, &in[p].addr, &terms);
            out[p] = (struct static_record){addr, terms, 1};
        }
    }
    MPI_Alltoall(out, sizeof(*out), MPI_BYTE, in, sizeof(*in), MPI_BYTE, rt.comm);

    for (int node = 0; node < topo.num_nodes; node++) {
        if (node == topo.my_node && !rmw_route_loopback())
            continue;
        const struct static_record *r = &in[topo_node_master(node)];
        struct conn *c = conn_table_find(node);
        client_conn_establish(c, &r->addr, r->terms);
        client_conn_ready(c);
    }
    free(out);
    free(in);
}
