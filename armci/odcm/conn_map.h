/*
 * The job's connection map (ARMCI_CONN_MAP=file:PATH): for every pair of
 * nodes, how many of the first node's processes connected to the second's
 * data server, how often connections were opened and closed (under
 * ARMCI_MAX_CONNECTIONS they churn), and how many operations went over RC
 * and over UD (ARMCI_HYBRID). Each process counts its own row; at finalize
 * the rows are summed per node and rank 0 writes the matrix as JSON, which
 * scripts/conn-map.py draws beside the static mode's full matrix.
 */
#ifndef ARMCI_ODCM_CONN_MAP_H
#define ARMCI_ODCM_CONN_MAP_H

#include <stdbool.h>

/* What the connection report knows that the map repeats beside the matrix. */
struct conn_map_totals {
    const char *mode, *protocol;
    long c2s_min, c2s_max, s2c_min, s2c_max;
    double c2s_avg, s2c_avg;
    long mem_bytes, static_mem_bytes, setups, retrans, closed, reopened;
    long static_c2s;
    int loopback; /* static mode also connects each process to its own node's server */
};

void conn_map_init(int num_nodes);
void conn_map_opened(int node);
void conn_map_closed(int node);
/* An operation to node's processes (put, get, accumulate or Rmw) over UD or over RC. */
void conn_map_op(int node, bool ud);
/* Collective over the job; rank 0 writes the map if any rank asked for one. */
void conn_map_write(const struct conn_map_totals *t);
void conn_map_fini(void);

#endif
