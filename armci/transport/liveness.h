/*
 * Whether the nodes a process waits on are still there.
 *
 * A reply, a lock grant or a barrier flag from a node whose host was powered
 * off or cut off never comes, and nothing else tells the waiter: its own
 * requests had all been acknowledged by the node's adapter before it went.
 * So a waiter that has seen nothing complete for LIVENESS_QUIET_SECONDS asks
 * each node it waits on, once a second, whether it is there: a zero-length
 * RDMA write on the connection, which the node's adapter answers without any
 * of the node's CPUs (a node busy computing, or a data server asleep, still
 * answers; a lock held for minutes is not a lost node). A lost node's adapter
 * does not answer: after ARMCI_IB_RETRY retransmissions of ARMCI_IB_TIMEOUT
 * the probe fails and the job ends with an error naming the node and its host
 * (progress.c), within about 5 s with the defaults (3.8 s of retries after up
 * to a second of quiet), instead of waiting forever.
 */
#ifndef ARMCI_TRANSPORT_LIVENESS_H
#define ARMCI_TRANSPORT_LIVENESS_H

#define LIVENESS_QUIET_SECONDS 1.0 /* nothing completed for this long: ask */

/* Called by waiters outside the runtime lock: probes node (at most one probe in flight and
 * one a second per node) if it has an open connection. */
void liveness_probe(int node);

/* The progress engine saw something complete: the waiters are not stuck. */
void liveness_progressed(void);

/* The progress engine is about to block (runtime lock held): after a quiet second, probes
 * every node this process has operations outstanding at. */
void liveness_waiting(void);

#endif
