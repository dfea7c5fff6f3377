#include "odcm/directory.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memstat.h"
#include "core/shm.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"

/* What each process publishes (only for the gathers). */
struct dir_entry {
    struct verbs_addr client_ud;
    int32_t rank;
    uint32_t server_ud_qpn;   /* masters only */
    uint32_t client_data_qpn; /* the UD data path, if on */
    uint32_t server_data_qpn; /* masters only, if on */
};

/* What the node's master found in the gathered entries, which sizes the tables. A GID's
 * first gid_prefix bytes are the same in the whole job (all 16 on InfiniBand, where the GIDs
 * are unused and 0; 12 for RoCE v2's IPv4-mapped ones): kept once, the rest per node. */
struct dir_shape {
    int32_t lid_differs, gid_differs, data_path, gid_prefix;
};

/* The tables, in one block of the node's shared memory: written by the node's master at
 * init, read by every process of the node (and its data server) until finalize. */
static uint32_t *client_qpn;      /* [nprocs] */
static uint32_t *server_qpn;      /* [num_nodes] */
static uint8_t *gid_prefix;       /* [16] the job's GIDs' common first bytes (shape.gid_prefix) */
static uint16_t *node_lid;        /* [num_nodes] the master's port */
static uint8_t *node_gid_tail;    /* [num_nodes][gid_tail] the rest of its GID */
static uint16_t *rank_lid;        /* [nprocs] when processes of a node differ in LID; else NULL */
static uint8_t *rank_gid_tail;    /* [nprocs][gid_tail] when they differ in GID; else NULL */
static uint32_t *client_data_qpn; /* [nprocs] if the UD data path is on */
static uint32_t *server_data_qpn; /* [num_nodes] if it is on */
static size_t gid_tail;           /* 16 - shape.gid_prefix */
static void *block;
static size_t block_size;
static uint32_t offered_client, offered_server;
static long held; /* this process's share of the block */

void directory_offer_client_data(uint32_t qpn)
{
    offered_client = qpn;
}

void directory_offer_server_data(uint32_t qpn)
{
    offered_server = qpn;
}

/* Places the tables of `shape` in the block at base (NULL: only sizes it); its size. */
static size_t lay_out(char *base, const struct dir_shape *shape)
{
    size_t n = (size_t)rt.nprocs, nodes = (size_t)topo.num_nodes, at = 0;
#define PLACE(ptr, count)                          \
    do {                                           \
        at = (at + 7) & ~(size_t)7;                \
        (ptr) = base ? (void *)(base + at) : NULL; \
        at += sizeof(*(ptr)) * (count);            \
    } while (0)
    gid_tail = 16 - (size_t)shape->gid_prefix;
    PLACE(client_qpn, n);
    PLACE(server_qpn, nodes);
    PLACE(gid_prefix, 16);
    PLACE(node_lid, nodes);
    PLACE(node_gid_tail, nodes * gid_tail);
    rank_lid = NULL;
    rank_gid_tail = NULL;
    client_data_qpn = server_data_qpn = NULL;
    if (shape->lid_differs)
        PLACE(rank_lid, n);
    if (shape->gid_differs)
        PLACE(rank_gid_tail, n * gid_tail);
    if (shape->data_path) {
        PLACE(client_data_qpn, n);
        PLACE(server_data_qpn, nodes);
    }
#undef PLACE
    return at;
}

/* On a master: every process's entry, by rank (the node's gathered, then the masters'). */
static struct dir_entry *gather_all(const struct dir_entry *mine)
{
    int k = topo_node_nprocs(topo.my_node);
    struct dir_entry *node = topo_is_master() ? xmalloc(sizeof(*node) * (size_t)k) : NULL;
    MPI_Gather(mine, sizeof(*mine), MPI_BYTE, node, sizeof(*mine), MPI_BYTE, 0, topo.node_comm);
    if (!topo_is_master())
        return NULL;
    int nodes = topo.num_nodes;
    int *counts = xmalloc(sizeof(int) * (size_t)nodes),
        *displs = xmalloc(sizeof(int) * (size_t)nodes);
    for (int m = 0, at = 0; m < nodes; m++) {
        counts[m] = topo_node_nprocs(m) * (int)sizeof(*mine);
        displs[m] = at;
        at += counts[m];
    }
    struct dir_entry *by_node = xmalloc(sizeof(*by_node) * (size_t)rt.nprocs);
    MPI_Allgatherv(node, k * (int)sizeof(*mine), MPI_BYTE, by_node, counts, displs, MPI_BYTE,
                   topo.master_comm); /* a master's rank there is its node's number */
    struct dir_entry *all = xmalloc(sizeof(*all) * (size_t)rt.nprocs);
    for (int i = 0; i < rt.nprocs; i++)
        all[by_node[i].rank] = by_node[i];
    free(by_node);
    free(counts);
    free(displs);
    free(node);
    return all;
}

static struct dir_shape shape_of(const struct dir_entry *all)
{
    struct dir_shape shape = {.data_path = offered_client != 0, .gid_prefix = 16};
    for (int r = 0; r < rt.nprocs; r++) {
        const struct dir_entry *m = &all[topo_node_master(topo_node_of(r))];
        shape.lid_differs |= all[r].client_ud.lid != m->client_ud.lid;
        shape.gid_differs |= memcmp(all[r].client_ud.gid, m->client_ud.gid, 16) != 0;
        while (shape.gid_prefix > 0 &&
               memcmp(all[r].client_ud.gid, all[0].client_ud.gid, (size_t)shape.gid_prefix))
            shape.gid_prefix--;
    }
    return shape;
}

static void fill(const struct dir_entry *all)
{
    size_t prefix = 16 - gid_tail;
    memcpy(gid_prefix, all[0].client_ud.gid, prefix);
    for (int node = 0; node < topo.num_nodes; node++) {
        const struct dir_entry *m = &all[topo_node_master(node)];
        server_qpn[node] = m->server_ud_qpn;
        memcpy(node_gid_tail + (size_t)node * gid_tail, m->client_ud.gid + prefix, gid_tail);
        node_lid[node] = m->client_ud.lid;
        if (server_data_qpn)
            server_data_qpn[node] = m->server_data_qpn;
    }
    for (int r = 0; r < rt.nprocs; r++) {
        client_qpn[r] = all[r].client_ud.qpn;
        if (rank_lid)
            rank_lid[r] = all[r].client_ud.lid;
        if (rank_gid_tail)
            memcpy(rank_gid_tail + (size_t)r * gid_tail, all[r].client_ud.gid + prefix, gid_tail);
        if (client_data_qpn)
            client_data_qpn[r] = all[r].client_data_qpn;
    }
}

/*
 * The tables are the same for every process of a node, so the node keeps them once: the
 * master gathers its node's entries, all-gathers them with the other masters, and writes the
 * tables into a block of the node's shared memory that the others map. Its processes count a
 * k-th each (the master the rest).
 */
void directory_publish(struct verbs_addr client_ud, uint32_t server_ud_qpn)
{
    struct dir_entry mine = {client_ud, rt.me, server_ud_qpn, offered_client, offered_server};
    struct dir_entry *all = gather_all(&mine);
    struct dir_shape shape = {0};
    if (all)
        shape = shape_of(all);
    MPI_Bcast(&shape, sizeof(shape), MPI_BYTE, 0, topo.node_comm);
    block_size = lay_out(NULL, &shape);
    char tag[32];
    snprintf(tag, sizeof(tag), "dir%d", topo.my_node);
    block = shm_map_collective(topo.node_comm, tag, block_size, NULL, NULL);
    lay_out(block, &shape);
    if (all)
        fill(all);
    free(all);
    MPI_Barrier(topo.node_comm); /* written before anyone reads */

    long k = topo_node_nprocs(topo.my_node);
    held = (long)block_size / k + (topo_is_master() ? (long)block_size % k : 0);
    memstat_add(MEM_DIRECTORY, held);
}

void directory_fini(void)
{
    shm_unmap(block, block_size);
    block = NULL;
    block_size = 0;
    client_data_qpn = server_data_qpn = NULL;
    offered_client = offered_server = 0;
    client_qpn = server_qpn = NULL;
    gid_prefix = node_gid_tail = rank_gid_tail = NULL;
    node_lid = rank_lid = NULL;
    gid_tail = 0;
    memstat_add(MEM_DIRECTORY, -held);
    held = 0;
}

long directory_bytes(void)
{
    return held;
}

long directory_node_bytes(void)
{
    return (long)block_size;
}

/* The port of process rank. */
static struct verbs_addr port_of(int rank)
{
    int node = topo_node_of(rank);
    struct verbs_addr a = {.lid = rank_lid ? rank_lid[rank] : node_lid[node]};
    const uint8_t *tail = rank_gid_tail ? rank_gid_tail + (size_t)rank * gid_tail
                                        : node_gid_tail + (size_t)node * gid_tail;
    memcpy(a.gid, gid_prefix, 16 - gid_tail);
    memcpy(a.gid + 16 - gid_tail, tail, gid_tail);
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
