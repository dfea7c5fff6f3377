/*
 * The connection manager: callers ask for "a ready connection to node n"
 * and nothing else. Static mode (ARMCI_CONNECT=static) connects every
 * process to every other node's data server at init, exchanging QP numbers
 * over MPI (the ODCM paper's "Original"); on-demand mode creates a
 * connection the first time a process talks to a node.
 *
 * The manager sits below the transport: it never waits for a connection
 * and never posts on one. It tells its user that a connection became
 * ready through the on_ready callback given to cm_init.
 */
#ifndef ARMCI_ODCM_CM_H
#define ARMCI_ODCM_CM_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "odcm/cm_types.h"
#include "odcm/conn.h"

void cm_init(const struct cm_client_env *env);
void cm_fini(void);

/*
 * c's QP broke: a new QP pair is set up over UD with a new attempt number
 * (ondemand.h), the broken QP kept until then (its flushed requests name c).
 * c is connecting meanwhile (new operations queue); when it is set up, the
 * on_ready callback runs with c->recovering set. The new QP has room for
 * `extra_wrs` requests beyond the send queue's depth (replays).
 */
void cm_conn_reconnect(struct conn *c, int extra_wrs);

/* The connection whose QP (or broken QP being replaced) is qp, or NULL (asynchronous events
 * name QPs). */
struct conn *cm_conn_by_qp(const struct ibv_qp *qp);

/* Completions the manager may have in the client's CQ at once (its UD channel's send and
 * receive buffers; 0 in static mode), to size that CQ. */
int cm_client_cq_entries(void);

/*
 * The connection to `node`, starting its setup if needed, without waiting.
 * NULL when it cannot be had yet: this process holds ARMCI_MAX_CONNECTIONS
 * and the least recently used idle one is being closed (or none is idle
 * yet), or the one to `node` is being closed. The caller makes progress and
 * asks again; it pins the connection while it issues operations on it.
 */
struct conn *cm_conn_start(int node);

/* The connection if it exists, else NULL (fences skip nodes never talked to). */
struct conn *cm_conn_if_exists(int node);

/* The nodes this process holds a connection to, in a new array (*n of them; free it). */
int *cm_conn_nodes(int *n);

/* Client->server connections this process holds (statistics and tests). */
int cm_conn_count(void);
struct cm_stats cm_stats(void);
/* Retransmitted connection-management messages so far (this process). */
long cm_retransmissions(void);
/* Datagrams this process's UD channel refused as malformed or forged (tests). */
long cm_refused_datagrams(void);
/* Times this process's UD channel QP was reset after a failure (tests). */
long cm_ud_restarts(void);

/* Drives connection setup from the progress engine (UD messages, retransmissions). */
/* Returns how many connections moved on without a completion announcing it: a waiter must
 * look again before it sleeps. */
int cm_progress(void);

/* Seconds until cm_progress must run again even without completions (<0: never). */
double cm_next_deadline(void);

/* A descriptor that becomes readable when cm_progress has something to do that no completion
 * announces (a QP made in the background), or -1. */
int cm_wait_fd(void);

#endif
