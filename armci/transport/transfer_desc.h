/*
 * One description of every put, get and accumulate towards another node:
 * what the remote_* entry points build (remote.c), the connection queue
 * copies (entry.c), and transfer_issue (transfer.h), the route (route.h)
 * and the paths read. A type only: it sits at the bottom of the transport.
 */
#ifndef ARMCI_TRANSPORT_TRANSFER_DESC_H
#define ARMCI_TRANSPORT_TRANSFER_DESC_H

#include <stddef.h>

#include "strided/stride.h"
#include "transport/target.h"

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
    /* Must go over RC, never as a datagram: a write whose sender may not make progress
     * after it (the barrier's flags), which a datagram's retransmission would need. */
    bool rc_only;
};

#endif
