/*
 * transfer_issue, which takes a transfer (transfer_desc.h) on a ready
 * connection along the path route.h chooses: the RDMA path, the
 * data-server path or vectors. It enters the transport through
 * transfer_start (entry.h), which calls transfer_issue directly, or
 * through the connection's queue while the connection is being set up.
 */
#ifndef ARMCI_TRANSPORT_TRANSFER_H
#define ARMCI_TRANSPORT_TRANSFER_H

#include <stdbool.h>

#include "transport/handle.h"
#include "transport/transfer_desc.h"

struct conn;

/* Issues x on its ready connection c, counted in req; a blocking get returns with the data. */
void transfer_issue(struct conn *c, const struct transfer *x, struct handle *req, bool blocking);

#endif
