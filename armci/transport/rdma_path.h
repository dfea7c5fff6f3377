/*
 * Puts and gets by RDMA, the target's CPU idle: straight from or to the
 * user's memory when it is registered, else through bounce buffers (a
 * piece each, packed before its writes or unpacked when its reads
 * complete).
 */
#ifndef ARMCI_TRANSPORT_RDMA_PATH_H
#define ARMCI_TRANSPORT_RDMA_PATH_H

#include <stdbool.h>

#include "transport/handle.h"
#include "transport/transfer_desc.h"

struct conn;

/*
 * Waits until the data server of c's node has applied every update sent to
 * it so far: an operation that bypasses the server (RDMA, device atomics)
 * must not overtake an earlier accumulate or packed put to the same memory.
 */
void wait_server_updates(struct conn *c);

/*
 * Put or get x by RDMA on c, counted in req. Registered memory moves in
 * place, except for a blocking put that would have to wait for its writes:
 * copying up to one bounce buffer is cheaper than the wait. Writes small
 * enough to be inlined into the work request need neither.
 */
void rdma_transfer(struct conn *c, const struct transfer *x, struct handle *req, bool blocking);

#endif
