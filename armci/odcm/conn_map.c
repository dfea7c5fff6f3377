#include "odcm/conn_map.h"

#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"

/* The counters of one row, each an array over the target nodes. */
enum { MAP_CONNECTED, MAP_OPENED, MAP_CLOSED, MAP_RC_OPS, MAP_UD_OPS, MAP_KINDS };
static const char *const kind_names[MAP_KINDS] = {"connected", "opened", "closed", "rc_ops",
                                                  "ud_ops"};

static long *row; /* MAP_KINDS x num_nodes; NULL when this process keeps no map */
static int nodes;

void conn_map_init(int num_nodes)
{
    nodes = num_nodes;
    free(row);
    row = cfg.conn_map_file ? xcalloc((size_t)MAP_KINDS * (size_t)num_nodes, sizeof(long)) : NULL;
}

static void count(int kind, int node)
{
    if (row && node >= 0 && node < nodes)
        row[kind * nodes + node]++;
}

void conn_map_opened(int node)
{
    count(MAP_OPENED, node);
}

void conn_map_closed(int node)
{
    count(MAP_CLOSED, node);
}

void conn_map_op(int node, bool ud)
{
    count(ud ? MAP_UD_OPS : MAP_RC_OPS, node);
}

static void print_matrix(FILE *f, const char *name, const long *m, int kind)
{
    fprintf(f, "  \"%s\": [\n", name);
    for (int i = 0; i < nodes; i++) {
        fprintf(f, "    [");
        for (int j = 0; j < nodes; j++)
            fprintf(f, "%s%ld", j ? ", " : "", m[((size_t)i * MAP_KINDS + kind) * nodes + j]);
        fprintf(f, "]%s\n", i + 1 < nodes ? "," : "");
    }
    fprintf(f, "  ],\n");
}

static void print_map(FILE *f, const long *m, const struct conn_map_totals *t)
{
    fprintf(f, "{\n  \"format\": \"armci-odcm-conn-map 1\",\n");
    fprintf(f,
            "  \"mode\": \"%s\", \"protocol\": \"%s\", \"procs\": %d, \"nodes\": %d, \"cap\": %d, "
            "\"hybrid\": %d, \"loopback\": %d,\n",
            t->mode, t->protocol, rt.nprocs, nodes, cfg.max_connections, cfg.hybrid_on ? 1 : 0,
            t->loopback);
    fprintf(f, "  \"node_procs\": [");
    for (int i = 0; i < nodes; i++)
        fprintf(f, "%s%d", i ? ", " : "", topo_node_nprocs(i));
    fprintf(f, "],\n");
    for (int k = 0; k < MAP_KINDS; k++)
        print_matrix(f, kind_names[k], m, k);
    fprintf(f,
            "  \"totals\": {\"c2s_min\": %ld, \"c2s_avg\": %.3f, \"c2s_max\": %ld, \"s2c_min\": "
            "%ld, \"s2c_avg\": %.3f, \"s2c_max\": %ld, \"static_c2s\": %ld, \"mem_bytes\": %ld, "
            "\"static_mem_bytes\": %ld, \"setups\": %ld, \"retrans\": %ld, \"closed\": %ld, "
            "\"reopened\": %ld}\n}\n",
            t->c2s_min, t->c2s_avg, t->c2s_max, t->s2c_min, t->s2c_avg, t->s2c_max, t->static_c2s,
            t->mem_bytes, t->static_mem_bytes, t->setups, t->retrans, t->closed, t->reopened);
}

/*
 * Each process's row is summed over its node (to the node's master), and the
 * masters' rows go to rank 0 with their node's number: rank 0 holds one
 * node x node matrix, never one row per process.
 */
void conn_map_write(const struct conn_map_totals *t)
{
    int want = row != NULL, anyone;
    MPI_Allreduce(&want, &anyone, 1, MPI_INT, MPI_MAX, rt.comm);
    if (!anyone)
        return;
    size_t len = (size_t)MAP_KINDS * (size_t)nodes;
    long *mine = xcalloc(len + 1, sizeof(long)); /* [0]: the node, then the row */
    if (row) {
        memcpy(mine + 1, row, len * sizeof(long));
        for (int j = 0; j < nodes; j++) /* this process: connected to j, or not */
            mine[1 + MAP_CONNECTED * nodes + j] = row[MAP_OPENED * nodes + j] > 0;
    }
    long *node_row = xcalloc(len + 1, sizeof(long));
    MPI_Reduce(mine + 1, node_row + 1, (int)len, MPI_LONG, MPI_SUM, 0, topo.node_comm);
    node_row[0] = topo.my_node;
    long *all = NULL;
    if (topo.master_comm != MPI_COMM_NULL) {
        all = rt.me == 0 ? xcalloc((len + 1) * (size_t)nodes, sizeof(long)) : NULL;
        MPI_Gather(node_row, (int)len + 1, MPI_LONG, all, (int)len + 1, MPI_LONG, 0,
                   topo.master_comm);
    }
    free(mine);
    free(node_row);
    if (rt.me != 0 || !cfg.conn_map_file) {
        free(all);
        return;
    }
    /* By node number: [node][kind][target]. */
    long *m = xcalloc(len * (size_t)nodes, sizeof(long));
    for (int i = 0; i < nodes; i++) {
        const long *r = all + (size_t)i * (len + 1);
        memcpy(m + (size_t)r[0] * len, r + 1, len * sizeof(long));
    }
    free(all);
    FILE *f = fopen(cfg.conn_map_file, "w");
    if (!f)
        armci_warn("ARMCI_CONN_MAP=file:%s: cannot open the file (%s): no map", cfg.conn_map_file,
                   strerror(errno));
    else {
        print_map(f, m, t);
        fclose(f);
    }
    free(m);
}

void conn_map_fini(void)
{
    free(row);
    row = NULL;
}
