/* The server side of one client's connection (data server thread only). */
#ifndef ARMCI_DATASERVER_SERVER_CONN_H
#define ARMCI_DATASERVER_SERVER_CONN_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

struct engine_client;
struct pull;
struct parked;

struct server_conn {
    int client;                   /* the client's rank */
    struct engine_client *engine; /* its sequence space, across connections and carriers */
    struct ibv_qp *qp;
    uint32_t psn;
    int allowance;  /* requests the client may have outstanding here (credits.c) */
    bool requested; /* it has sent a request: it counts in the credits and the buffers */
    int max_sge;    /* gather entries per RDMA write on its QP */
    int sq_posted;
    uint64_t last_served; /* the loop's request count when it last sent one (least recently used) */
    bool broken;          /* a send failed: the QP is in error, nothing more is served */
    /* Successful updates answered later, together (struct ds_reply; answers.c). */
    uint32_t answers_due;
    uint32_t sends_due; /* the SENDs that carried them (several requests may share one) */
    uint64_t last_due;  /* the token of the last of them */
    int credits_due;
    bool on_due_list;
    /* A read of this client's data in flight, and what arrived behind it (pulls.h). */
    struct pull *pull;
    struct parked *parked, *parked_tail;
    bool resume_due; /* its pull was served: its waiting messages are next (pulls.h) */
    struct server_conn *resume_next;
};

#endif
