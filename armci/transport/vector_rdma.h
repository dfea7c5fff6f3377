/*
 * Vectors by RDMA: a chain of RDMA writes or reads, one per segment, posted
 * together (one doorbell on an HCA, one batch in softib) with no work for
 * the target's CPU. route.h decides when this beats a packed request to the
 * data server (GA's NGA_Scatter and NGA_Gather of a few elements do).
 */
#ifndef ARMCI_TRANSPORT_VECTOR_RDMA_H
#define ARMCI_TRANSPORT_VECTOR_RDMA_H

#include <stdbool.h>

#include "transport/handle.h"
#include "transport/transfer_desc.h"

struct conn;

/* Put or get vector x (not an accumulate) on c by RDMA, counted in req; a blocking get's data
 * is there once req completes (transfer_issue waits). */
void rdma_vector(struct conn *c, const struct transfer *x, struct handle *req, bool blocking);

#endif
