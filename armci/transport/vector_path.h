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

/* Sends vector x's segments many to a request, counted in req, and returns true; false (and
 * nothing sent) when they are better sent one by one. A non-blocking caller's requests may
 * wait to share a SEND with the next ones (send_queue.h: defer). */
bool vector_send_batched(struct conn *c, const struct transfer *x, struct handle *req,
                         bool blocking);

#endif
