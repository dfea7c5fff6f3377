/*
 * Where a put, get or accumulate enters the transport: the remote_* data
 * entry points (remote.h, remote.c) describe it as a transfer and start it
 * with transfer_start. And connections,
 * transport side: what the transport keeps about each one
 * (struct conn_io, given to the connection manager's struct conn when it
 * enters the table), pinning a connection while we issue on it, and the
 * queue of operations issued while it is being set up (non-blocking
 * operations towards a node being connected queue in issue order, so a
 * client talking to many new nodes sets their connections up at once).
 * The connection manager calls back here (cm_client_env): on_insert,
 * on_ready, on_destroy, busy, waits_for_lock.
 */
#ifndef ARMCI_TRANSPORT_ENTRY_H
#define ARMCI_TRANSPORT_ENTRY_H

#include <stdbool.h>

#include "transport/conn_io.h"
#include "transport/handle.h"
#include "transport/transfer_desc.h"

struct conn;

/* The ready connection to node (waits for it), pinned until conn_unpin: it is not closed while
 * we issue on it (ARMCI_MAX_CONNECTIONS). */
struct conn *conn_get(int node);
void conn_unpin(struct conn *c);
/* Waits until c is ready and the operations queued on it are posted; returns c. */
struct conn *conn_wait_ready(struct conn *c);

/*
 * The ready connection to node for transfer x, pinned until conn_unpin (at
 * the connection cap, waits for room), or NULL when x was queued instead:
 * non-blocking, towards a connection being set up (or others wait on it
 * before x), its descriptors copied and counted in req. At most
 * ARMCI_SEND_WQES operations queue: past that the caller waits for the
 * connection, posting the queue first.
 */
struct conn *conn_for_transfer(int node, const struct transfer *x, struct handle *req,
                               bool blocking);

/*
 * Starts x, counted in req. Blocking: returns when the local buffer may be
 * reused (a get: when the data is there). Non-blocking towards a node
 * being connected: queued in issue order, descriptors copied.
 */
void transfer_start(const struct transfer *x, struct handle *req, bool blocking);

/*
 * Under the runtime lock: whether an operation like x to node goes over the
 * hybrid UD path (route_via_datagram, with what the connection table says);
 * if not, the node's UD requests are drained first. `for_rmw`: an Rmw, which
 * does not count towards the node's promotion to RC.
 */
bool path_is_datagram(int node, const struct transfer *x, bool for_rmw);

/* Posts the operations queued on connections that became ready (progress engine). */
void conns_drain_ready(void);
void conns_fini(void);

/* cm's callbacks. on_insert: gives c the transport's state (c->io). */
void conn_insert(struct conn *c);
/* on_ready: queued operations of c are posted at the next progress. */
void conn_on_ready(struct conn *c);
/* on_destroy: c goes away, and what the transport keeps about it (c->io). */
void conn_forget(struct conn *c);
/* busy: anything of ours on c, in flight or about to be (then it stays open). */
bool conn_busy(const struct conn *c);
/* on_broken: c's server says its end broke: c's recovery starts. */
void conn_on_broken(struct conn *c);
/* waits_for_lock: a thread waits on c for a lock grant. */
bool conn_waits_for_lock(const struct conn *c);

#endif
