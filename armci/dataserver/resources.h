/*
 * The data server's verbs resources, made at init and gone at finalize:
 * its two completion queues, the shared receive queue every client's QP
 * receives requests into, the registered buffers packed gets are gathered
 * into, and (on-demand mode) QPs made ahead of first contacts.
 */
#ifndef ARMCI_DATASERVER_RESOURCES_H
#define ARMCI_DATASERVER_RESOURCES_H

#include "verbs/buffer_pool.h"
#include "verbs/endpoint.h"
#include "verbs/rc_qp.h"

struct server_resources {
    struct endpoint requests; /* receive CQ with a channel to sleep on: requests and UD */
    struct endpoint sends;    /* send CQ, drained without blocking: replies, RDMA, UD */
    struct recv_pool bufs;    /* the SRQ of every server QP: request header + payload each */
    struct buffer_pool out;   /* packed gets and vector gets are gathered here, then written */
    struct qp_pool *qp_pool;  /* on-demand mode: QPs made ahead for first contacts; or NULL */
};

extern struct server_resources ds_res;

/* The hybrid UD path's data endpoint (dgram_server.c) on these CQs. Receive buffers: two full
 * windows of datagrams (ARMCI_HYBRID_WINDOW's default: a window and its retransmission when
 * the server is slow to answer) for each client that has talked to the server over UD, up to
 * the most; a datagram that finds none is lost and retransmitted by its client (test
 * ud-buffers-6x1 at a 2 ms timeout: with one window a client, 1 to 4 were lost in 2 runs of
 * 5). Each needs twice its most buffers in CQ entries (0 when the path is off): completions
 * of before a reset of its QP may still be there (odcm/ud.c). */
#define DGRAM_SERVER_RECV_PER_CLIENT 64
#define DGRAM_SERVER_RECV_BUFS       256
#define DGRAM_SERVER_SEND_BUFS       64

struct rc_qp_caps server_qp_caps(void);

/* Sends posted at most at once over all connections (the send CQ's room). */
int server_send_budget(void);

/* The CQs, the request buffers (received requests go to on_request) and the out buffers. */
void resources_create(completion_fn on_request);
/* The request buffers grow (up to ARMCI_SERVER_BUFS) to a full allowance of credits for each
 * of `clients` connections that have sent a request (credits.h); they never shrink (buffers
 * posted to the SRQ stay there). */
void resources_fit_clients(int clients);
/* The server is idle: the out buffers give back what the last second did not need (their
 * trim; the request buffers stay, posted on the shared receive queue). */
void resources_trim(double now);
/* QPs made ahead (after the connection manager has its resources). */
void resources_create_qp_pool(void);
void resources_destroy(void);

#endif
