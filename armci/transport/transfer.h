/*
 * One description of every put, get and accumulate towards another node
 * (struct transfer), and transfer_issue, which takes it on a ready
 * connection along the path route.h chooses: the RDMA path, the
 * data-server path or vectors. It enters the transport through
 * transfer_start (entry.h), which calls transfer_issue directly, or
 * through the connection's queue while the connection is being set up.
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

/* Issues x on its ready connection c, counted in req; a blocking get returns with the data. */
void transfer_issue(struct conn *c, const struct transfer *x, struct handle *req, bool blocking);

#endif
