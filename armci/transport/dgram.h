/*
 * The client's side of the hybrid UD data path (the MVAPICH-Aptus design;
 * wire format and exactly-once rule in wire/dgram_protocol.h): small
 * puts, gets, accumulates (contiguous, vector, strided: a request per
 * contiguous piece, a longer piece cut into several) and Rmw to a node without a ready RC
 * connection go as datagrams to its data server, at once, with no wait for a
 * connection slot. route.h decides which operations come here.
 *
 * Per node: a window of ARMCI_HYBRID_WINDOW numbered requests, each kept
 * (its data copied) until its answer arrives; requests to one node share a
 * datagram; the oldest unanswered one is sent again with all after it when
 * the retransmission timer (SRTT, back-off, Karn, as ondemand.c's) runs out;
 * a node that answers nothing for ARMCI_HYBRID_TIMEOUT ends the job, named.
 * State is allocated for the nodes actually used, and grows with the window
 * they use.
 */
#ifndef ARMCI_TRANSPORT_DGRAM_H
#define ARMCI_TRANSPORT_DGRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "transport/handle.h"
#include "transport/target.h"
#include "transport/transfer_desc.h"

/* Completions the client CQ needs room for (its receive buffers; 0 when off). */
int dgram_client_cq_entries(void);
/* With the hybrid path on: the endpoint (after progress_init), offered to the directory. */
void dgram_init(void);
void dgram_fini(void);

/* Bytes of x one request carries: a put's or accumulate's payload (whole elements), or the data
 * of a get's answer. */
size_t dgram_room(const struct transfer *x);

/*
 * Starts transfer x over UD, a request per contiguous piece, or several for a
 * piece longer than the rooms above (route.h bounds the whole), counted in req
 * until answered. Blocking: a get returns with
 * its data; a put or accumulate once its data is copied and sent (if not
 * blocking, at the next progress, with what follows it to that node).
 */
void dgram_transfer(const struct transfer *x, struct handle *req, bool blocking);

/* An Rmw at t's node's data server over UD (`size` bytes: int or long); the old value. */
long dgram_rmw(const struct target *t, int op, long value, size_t size);

/* Waits until every request to node (or to every node) is answered: fences. */
void dgram_fence(int node);
void dgram_fence_all(void);

#endif
