/*
 * A client's connection to one node's data server, as the connection
 * manager keeps it (cm.h hands them out; conn_table.h holds them). The
 * transport reads its QP and limits, and hangs its own state on it (io).
 */
#ifndef ARMCI_ODCM_CONN_H
#define ARMCI_ODCM_CONN_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "odcm/cm_server.h"
#include "verbs/device.h"

struct conn_io;

enum conn_state {
    CONN_IDLE,
    CONN_CONNECTING,
    CONN_READY,
    CONN_CLOSING, /* disconnecting (ARMCI_MAX_CONNECTIONS): gone once the server agrees */
};

/* A client's connection to one node's data server. */
struct conn {
    int node;
    enum conn_state state;
    struct ibv_qp *qp;
    uint32_t psn; /* my initial packet sequence number */
    uint32_t max_inline;
    int sq_depth;       /* send WRs this QP may have posted */
    int max_sge;        /* gather entries per send WR */
    int server_gather;  /* entries the server's QP gathers per RDMA write */
    int server_credits; /* the server's terms: requests it lets us have outstanding at first */
    uint64_t last_used; /* when an operation last asked for it (least recently used) */
    bool close_asked;   /* its server asked us to close it when idle */
    double setup_begin;
    double setup_end;
    /* Recovery (transport/recovery.h): its QP broke and a new one is being set up. */
    bool recovering;
    struct ibv_qp *broken_qp; /* kept until the new QP is ready: its flushed requests name c */

    /* On-demand setup (ondemand.c). */
    uint32_t epoch;                /* this connection attempt, echoed by the server */
    bool have_server_addr;         /* REP (or ACK) received (our QP is RTS if we have it) */
    struct verbs_addr server_addr; /* the server's QP, from its REP */
    struct cm_terms server_terms;
    bool server_ready; /* ACK received: the server's QP is RTS */
    bool establishing; /* our QP's RTR/RTS are under way in the background */
    bool watched;      /* in ondemand.c's list of connections being set up or closed */
    bool established;  /* our QP is RTS */
    double next_retry; /* retransmission deadline */
    double rto;        /* current retransmission timeout */
    int retries;
    double silent_since; /* the timeout counts from here: the setup's start, or our return
                            from a time away (TIMER_AWAY_SECONDS) */

    /* The transport's state of this connection (transport/conn_io.h), set by its on_insert
     * callback. The manager never reads it: it asks through cm_client_env. */
    struct conn_io *io;
};

#endif
