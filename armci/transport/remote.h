/*
 * Operations towards a process on another node: the inter-node data path
 * (RDMA for put/get, the target node's data server for the rest). The
 * front doors in ops.c, rmw.c and mutex.c validate arguments and handle
 * same-node targets; everything here has a resolved target on another node.
 *
 * `req` counts the operation until it is complete at the target (fence
 * semantics). With `blocking`, the call returns only when the local buffer
 * may be reused (put/acc) or holds the data (get); otherwise the buffer
 * belongs to the operation until req completes.
 */
#ifndef ARMCI_TRANSPORT_REMOTE_H
#define ARMCI_TRANSPORT_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/stride.h"
#include "transport/handle.h"
#include "transport/target.h"

/* Contiguous puts, gets and accumulates (as transfers: transfer_desc.h, started by entry.h). */
void remote_put(const struct target *t, const void *src, size_t bytes, struct handle *req,
                bool blocking);
/* A blocking put that goes over RC whatever the hybrid path would choose: the sender may
 * not make progress after it (the barrier's flags; a datagram would need its retransmission). */
void remote_put_rc(const struct target *t, const void *src, size_t bytes);
/* Waits until the puts of remote_put_rc (and this thread's other blocking operations) are
 * complete at their targets. */
void remote_put_rc_complete(void);
void remote_get(const struct target *t, void *dst, size_t bytes, struct handle *req, bool blocking);
void remote_acc(const struct target *t, int datatype, const void *scale, const void *src,
                size_t bytes, struct handle *req, bool blocking);

/* Strided: large chunks move as one RDMA each, small ones are packed and handed to the
 * target's data server. */
void strided_remote_put(const struct target *t, const struct stride_desc *d, const char *src,
                        struct handle *req, bool blocking);
void strided_remote_get(const struct target *t, const struct stride_desc *d, char *dst,
                        struct handle *req, bool blocking);
void strided_remote_acc(const struct target *t, const struct stride_desc *d, int datatype,
                        const void *scale, const char *src, struct handle *req, bool blocking);

/*
 * Vectors (armci_giov_t): segments of at least ARMCI_STRIDED_THRESHOLD
 * bytes move as one RDMA each; smaller ones are batched, many per request,
 * with their addresses, to the data server. ts[i] is the remote end of
 * segment i, local[i] the local one; n segments of `bytes`.
 */
void vector_remote_put(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking);
void vector_remote_get(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking);
void vector_remote_acc(const struct target *ts, void *const *local, int n, size_t bytes,
                       int datatype, const void *scale, struct handle *req, bool blocking);

/* Read-modify-write at the target; returns the old value. */
long remote_rmw(const struct target *t, int op, long value);

/* Ticket lock held at the target's node (see mutex.c for the layout). */
void remote_lock(const struct target *t);
void remote_unlock(const struct target *t);

/* Waits until everything issued to `node` (or to all nodes) is complete there. */
void remote_fence(int node);
void remote_fence_all(void);

#endif
