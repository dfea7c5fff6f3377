#include "odcm/directory.h"

#include <mpi.h>
#include <stdlib.h>

#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "odcm/cm_server.h"

struct dir_entry {
    struct verbs_addr client_ud;
    uint32_t server_ud_qpn; /* masters only */
    uint32_t pad;
};

static struct dir_entry *dir;

void directory_publish(struct verbs_addr client_ud)
{
    struct dir_entry mine = {client_ud, topo_is_master() ? cm_server_ud_qpn() : 0, 0};
    dir = xmalloc(sizeof(*dir) * (size_t)rt.nprocs);
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, dir, sizeof(mine), MPI_BYTE, rt.comm);
}

void directory_fini(void)
{
    free(dir);
    dir = NULL;
}

struct verbs_addr directory_server(int node)
{
    const struct dir_entry *e = &dir[topo_node_master(node)];
    struct verbs_addr a = e->client_ud; /* same process, same port: same LID and GID */
    a.qpn = e->server_ud_qpn;
    return a;
}

struct verbs_addr directory_client(int rank)
{
    return dir[rank].client_ud;
}
