/*
 * One description of every put, get and accumulate towards another node
 * (struct transfer), and where it enters the transport (transfer_start,
 * called by the remote_* front doors of remote.c). transfer_issue chooses
 * between the RDMA path, the data-server path and vectors; transfer_start
 * calls it directly, or through the connection's queue (conn_queue.c)
 * while the connection is being set up.
 */
#ifndef ARMCI_TRANSPORT_TRANSFER_H
#define ARMCI_TRANSPORT_TRANSFER_H

#include <stdbool.h>
#include <stddef.h>

#include "strided/stride.h"
#include "transport/handle.h"
#include "transport/target.h"

struct conn;

enum transfer_op { TRANSFER_PUT, TRANSFER_GET, TRANSFER_ACC };

/*
 * One put, get or accumulate towards another node: a strided box (levels
 * 0: count[0] contiguous bytes) between local and remote, or a vector of
 * n segments of `bytes` each (locals[i] <-> remotes[i], all on one node).
 * The descriptor's src side is the local one for put/acc, the remote one
 * for get, as in the ARMCI call.
 */
struct transfer {
    enum transfer_op op;
    int datatype;      /* accumulate: ARMCI_ACC_* */
    const void *scale; /* accumulate: one element */
    char *local;
    struct target remote;
    struct stride_desc d;
    int n; /* vector (locals != NULL) */
    size_t bytes;
    void *const *locals;
    const struct target *remotes;
};

/*
 * Starts x, counted in req. Blocking: returns when the local buffer may be
 * reused (a get: when the data is there). Non-blocking towards a node
 * being connected: queued in issue order, descriptors copied.
 */
void transfer_start(const struct transfer *x, struct handle *req, bool blocking);

/* Issues x on its ready connection c, counted in req; a blocking get returns with the data. */
void transfer_issue(struct conn *c, const struct transfer *x, struct handle *req, bool blocking);

#endif
