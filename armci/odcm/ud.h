/*
 * The UD out-of-band channel used to set connections up. Each process has
 * one UD endpoint (its client side) and each data server another; their
 * addresses are all-gathered at init. Address handles are created on first
 * use and cached, so state grows with the peers really talked to.
 *
 * UD is unreliable: datagrams may be lost (or injected-lost by softib),
 * reordered or duplicated; the protocols above retransmit and are
 * idempotent.
 */
#ifndef ARMCI_ODCM_UD_H
#define ARMCI_ODCM_UD_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/intmap.h"
#include "verbs/device.h"
#include "verbs/endpoint.h"

/* Connection-management messages. */
enum cm_msg_type {
    CM_REQ = 1, /* client -> server: please create your end */
    CM_REP,     /* server -> client: my QP (and credits) */
    CM_RTU,     /* client -> server: my QP ("ready to use" once you are RTS) */
    CM_ACK,     /* server -> client: my QP is RTR/RTS, you may send */
};

struct cm_msg {
    uint8_t type;     /* enum cm_msg_type */
    uint8_t protocol; /* enum cfg_protocol of the client */
    uint16_t pad;
    int32_t rank;         /* the client (requester) */
    int32_t node;         /* the server's node */
    uint32_t epoch;       /* the client's connection attempt */
    int32_t credits;      /* REP/ACK: initial request credits */
    struct verbs_addr qp; /* REP: the server's RC QP; RTU (and serial REQ): the client's */
};

/* Receives one connection message (a copy: valid during the call only). */
typedef void (*cm_msg_fn)(void *ctx, const struct cm_msg *m);

struct ud_endpoint {
    struct ibv_qp *qp;
    uint32_t qkey;
    struct recv_pool recv;
    char *send_bufs;
    struct net_mr *send_mr;
    uint32_t send_free; /* bit i: send buffer i is free */
    struct intmap ah;   /* peer key -> struct ibv_ah */
    cm_msg_fn on_message;
    void *ctx;
    long sent;
    long received;
};

/* Entries a UD endpoint needs on its CQ(s). */
int ud_cq_entries(void);

/* Sends complete on send_ep, receives on recv_ep (they may be the same endpoint). */
void ud_create(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
               const char *who, cm_msg_fn on_message, void *ctx);
void ud_destroy(struct ud_endpoint *u);

/* The address to publish for this endpoint. */
struct verbs_addr ud_addr(const struct ud_endpoint *u);

/*
 * Sends msg to peer (address `to`, AH cached under `peer_key`). Returns
 * false when every send buffer is busy: the caller's retransmission timer
 * tries again later.
 */
bool ud_send(struct ud_endpoint *u, int peer_key, const struct verbs_addr *to,
             const struct cm_msg *msg);

#endif
