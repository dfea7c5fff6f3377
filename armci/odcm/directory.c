#include "odcm/directory.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/memstat.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"

/* What each process publishes (only for the all-gather). */
struct dir_entry {
    struct verbs_addr client_ud;
    uint32_t server_ud_qpn;   /* masters only */
    uint32_t client_data_qpn; /* the UD data path, if on */
    uint32_t server_data_qpn; /* masters only, if on */
};

struct port {
    uint8_t gid[16];
    uint16_t lid;
};

static uint32_t *client_qpn;      /* [nprocs] */
static uint32_t *server_qpn;      /* [num_nodes] */
static struct port *node_port;    /* [num_nodes] the master's port */
static uint16_t *rank_lid;        /* [nprocs] when processes of a node differ in LID; else NULL */
static uint8_t (*rank_gid)[16];   /* [nprocs] when they differ in GID; else NULL */
static uint32_t *client_data_qpn; /* [nprocs] if the UD data path is on */
static uint32_t *server_data_qpn; /* [num_nodes] if it is on */
static uint32_t offered_client, offered_server;
static long held;

void directory_offer_client_data(uint32_t qpn)
{
    offered_client = qpn;
}

void directory_offer_server_data(uint32_t qpn)
{
    offered_server = qpn;
}

void directory_publish(struct verbs_addr client_ud, uint32_t server_ud_qpn)
{
    int n = rt.nprocs, nodes = topo.num_nodes;
    struct dir_entry mine = {client_ud, server_ud_qpn, offered_client, offered_server};
    struct dir_entry *all = xmalloc(sizeof(*all) * (size_t)n);
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, rt.comm);

    client_qpn = xmalloc(sizeof(*client_qpn) * (size_t)n);
    server_qpn = xmalloc(sizeof(*server_qpn) * (size_t)nodes);
    node_port = xcalloc((size_t)nodes, sizeof(*node_port));
    for (int node = 0; node < nodes; node++) {
        const struct dir_entry *m = &all[topo_node_master(node)];
        server_qpn[node] = m->server_ud_qpn;
        memcpy(node_port[node].gid, m->client_ud.gid, sizeof(node_port[node].gid));
        node_port[node].lid = m->client_ud.lid;
    }
    /* Every process sees the same table, so all decide alike. */
    bool lid_differs = false, gid_differs = false;
    for (int r = 0; r < n; r++) {
        const struct port *p = &node_port[topo_node_of(r)];
        client_qpn[r] = all[r].client_ud.qpn;
        lid_differs |= all[r].client_ud.lid != p->lid;
        gid_differs |= memcmp(all[r].client_ud.gid, p->gid, sizeof(p->gid)) != 0;
    }
    if (lid_differs) {
        rank_lid = xmalloc(sizeof(*rank_lid) * (size_t)n);
        for (int r = 0; r < n; r++)
            rank_lid[r] = all[r].client_ud.lid;
    }
    if (gid_differs) {
        rank_gid = xmalloc(sizeof(*rank_gid) * (size_t)n);
        for (int r = 0; r < n; r++)
            memcpy(rank_gid[r], all[r].client_ud.gid, sizeof(rank_gid[r]));
    }
    if (offered_client) {
        client_data_qpn = xmalloc(sizeof(*client_data_qpn) * (size_t)n);
        server_data_qpn = xmalloc(sizeof(*server_data_qpn) * (size_t)nodes);
        for (int r = 0; r < n; r++)
            client_data_qpn[r] = all[r].client_data_qpn;
        for (int node = 0; node < nodes; node++)
            server_data_qpn[node] = all[topo_node_master(node)].server_data_qpn;
    }
    free(all);

    held = (client_data_qpn ? (long)(sizeof(uint32_t) * (size_t)(n + nodes)) : 0) +
           (long)(sizeof(*client_qpn) * (size_t)n) +
           (long)((sizeof(*server_qpn) + sizeof(*node_port)) * (size_t)nodes) +
           (rank_lid ? (long)(sizeof(*rank_lid) * (size_t)n) : 0) +
           (rank_gid ? (long)(sizeof(*rank_gid) * (size_t)n) : 0);
    memstat_add(MEM_DIRECTORY, held);
}

void directory_fini(void)
{
    free(client_qpn);
    free(server_qpn);
    free(node_port);
    free(rank_lid);
    free(rank_gid);
    free(client_data_qpn);
    free(server_data_qpn);
    client_data_qpn = server_data_qpn = NULL;
    offered_client = offered_server = 0;
    client_qpn = server_qpn = NULL;
    node_port = NULL;
    rank_lid = NULL;
    rank_gid = NULL;
    memstat_add(MEM_DIRECTORY, -held);
    held = 0;
}

long directory_bytes(void)
{
    return held;
}

/* The port of process rank. */
static struct verbs_addr port_of(int rank)
{
    const struct port *p = &node_port[topo_node_of(rank)];
    struct verbs_addr a = {.lid = rank_lid ? rank_lid[rank] : p->lid};
    memcpy(a.gid, rank_gid ? rank_gid[rank] : p->gid, sizeof(a.gid));
    return a;
}

struct verbs_addr directory_server(int node)
{
    struct verbs_addr a = port_of(topo_node_master(node)); /* the master's process and port */
    a.qpn = server_qpn[node];
    return a;
}

struct verbs_addr directory_client(int rank)
{
    struct verbs_addr a = port_of(rank);
    a.qpn = client_qpn[rank];
    return a;
}

struct verbs_addr directory_server_data(int node)
{
    struct verbs_addr a = port_of(topo_node_master(node));
    a.qpn = server_data_qpn[node];
    return a;
}

struct verbs_addr directory_client_data(int rank)
{
    struct verbs_addr a = port_of(rank);
    a.qpn = client_data_qpn[rank];
    return a;
}
