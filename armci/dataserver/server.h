/*
 * The data server: one thread per node, in the node's master process. It
 * serves what RDMA cannot do for clients on other nodes (accumulate, Rmw,
 * locks, packed strided transfers), from a shared receive queue whose size
 * does not depend on the number of clients, and blocks on a completion
 * channel when idle, after polling a while that adapts to the gaps between
 * requests (linger.c, ARMCI_SERVER_SPIN_US; ARMCI_SERVER_POLL=1 makes it
 * spin instead).
 *
 * Inside, bottom up (each file uses only those above it in this list):
 *   resources.c    CQs, request buffers (SRQ), out buffers, QPs made ahead
 *   registry.c     the segments mapped for remote access; every range is checked here
 *   sends.c        posting within the queues' room, send completions
 *   credits.c      the credit policy: allowances and credits per reply
 *   answers.c      answers, and the batching of successful updates' answers
 *   locks.c        ticket locks held for remote clients
 *   pulls.c        RDMA reads of clients' data in flight, and what waits behind them
 *   handlers.c     executes one request (validated against the registry)
 *   link.c         the local socket: map/unmap, same-node unlocks, stop
 *   connections.c  the connection manager's callbacks (cm_server_ops)
 *   linger.c       how long the loop polls after work before it sleeps
 *   server.c       the loop and the server's life (this header)
 */
#ifndef ARMCI_DATASERVER_SERVER_H
#define ARMCI_DATASERVER_SERVER_H

/* Master only, in this order at init; stop and fini at finalize. */
void server_init(void);
void server_start(void);
void server_stop(void);
void server_fini(void);

#endif
