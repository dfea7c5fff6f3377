/*
 * Vector (armci_giov_t) transfers to another node: segments of at least
 * ARMCI_STRIDED_THRESHOLD bytes move as one RDMA each; smaller ones are
 * batched, many per request, with their addresses, to the data server.
 */
#ifndef ARMCI_TRANSPORT_VECTOR_REMOTE_H
#define ARMCI_TRANSPORT_VECTOR_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "transport/handle.h"
#include "transport/target.h"

/* ts[i] is the remote end of segment i, local[i] the local one; n segments of `bytes`. */
void vector_remote_put(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking);
void vector_remote_get(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking);
void vector_remote_acc(const struct target *ts, void *const *local, int n, size_t bytes,
                       int datatype, const void *scale, struct handle *req, bool blocking);

#endif
