/*
 * The client side of the inter-node data path (one per process): sets up
 * and tears down its parts, and tells the connection manager what it needs
 * from them. The parts, bottom up (each includes and calls only parts
 * before it here; tests/core/test_layers.py holds this order):
 *   target.h, conn_io.h, transfer_desc.h   types: a remote range, a connection's
 *                             transport state, one transfer
 *   handle.c                  the handles operations count in
 *   work.c                    works in flight, their bounce buffers, reply tokens
 *   send_queue.c              room, signaling, the chain of requests, lazy flushes
 *   requests.c                requests to the data server: reply slots, credits, packs
 *   retire.c                  send completions: what each retires
 *   replies.c, liveness.c     answering messages from replies; probes of quiet nodes
 *   progress.c                the progress engine (owns the client CQ)
 *   pieces.c, route.c         cutting boxes into pieces; the choice of path
 *   rdma_path.c, server_path.c, vector_path.c   the paths
 *   transfer.c                which path a transfer takes
 *   entry.c                   transfer_start; the connection wait queue
 *   atomic_path.c             Rmw on longs by device atomics
 *   remote.c                  the remote_* entry points: transfers, Rmw, locks, fences
 *   raw.c                     hand-made requests for the tests (not in libarmci)
 *   client.c                  setup, and the connection manager's callbacks
 *
 * Limits that keep every queue from overflowing:
 *   - per connection: at most sq_depth send WRs posted (ARMCI_SEND_WQES),
 *     and per process at most SQ_SEND_BUDGET signaled ones in flight, so the
 *     shared CQ never overruns (send_queue.h);
 *   - per connection: at most `credits` data-server messages outstanding (the
 *     server returns credits with replies), and per process at most
 *     REPLY_BUFS (one posted reply buffer each: requests.h, replies.h).
 */
#ifndef ARMCI_TRANSPORT_CLIENT_H
#define ARMCI_TRANSPORT_CLIENT_H

void client_init(void);
void client_fini(void);

/* What the connection manager needs from the client (cm_init's argument). */
struct cm_client_env;
void client_cm_env(struct cm_client_env *env);

#endif
