/*
 * Vectors (n segments of equal size, all to one node): small segments
 * travel many to a request to the data server; large ones go one by one as
 * contiguous transfers (transfer.c).
 */
#ifndef ARMCI_TRANSPORT_VECTOR_PATH_H
#define ARMCI_TRANSPORT_VECTOR_PATH_H

#include <stdbool.h>

#include "transport/handle.h"
#include "transport/transfer_desc.h"

struct conn;

/* Segments of `bytes` each that one request to the data server carries for a vector of op
 * (route.h prices the vector with it). */
int vector_batch(enum transfer_op op, size_t bytes);

/* Sends vector x's segments, `per_request` to a request, counted in req. A non-blocking
 * caller's requests may wait to share a SEND with the next ones (send_queue.h: defer). */
void vector_send_batched(struct conn *c, const struct transfer *x, int per_request,
                         struct handle *req, bool blocking);

#endif
