/*
 * The data server: one thread per node, in the node's master process. It
 * serves what RDMA cannot do for clients on other nodes (accumulate, Rmw,
 * locks, packed strided transfers), from a shared receive queue whose size
 * does not depend on the number of clients, and blocks on a completion
 * channel when idle (ARMCI_SERVER_POLL=1 makes it spin instead).
 */
#ifndef ARMCI_DATASERVER_SERVER_H
#define ARMCI_DATASERVER_SERVER_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "verbs/device.h"

/* The server side of one client's connection. */
struct server_conn {
    int client; /* the client's rank */
    struct ibv_qp *qp;
    uint32_t psn;
    int allowance; /* requests the client may have outstanding here */
    int max_sge;   /* gather entries per RDMA write on its QP */
    int sq_posted;
    uint64_t sends_done;  /* statistics */
    uint64_t last_served; /* srv.served when it last sent a request (least recently used) */
    bool broken;          /* a send failed: the QP is in error, nothing more is served */
    /* Successful updates answered later, together (struct ds_reply). */
    uint32_t answers_due;
    uint64_t last_due; /* the token of the last of them */
    int credits_due;
    bool on_due_list;
};

/* Master only, in this order at init; stop and fini at finalize. */
void server_init(void);
void server_start(void);
void server_stop(void);
void server_fini(void);

#endif
