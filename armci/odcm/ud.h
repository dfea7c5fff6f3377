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
#include "verbs/buffer_pool.h"
#include "verbs/device.h"
#include "verbs/endpoint.h"

/* Connection-management messages. */
enum cm_msg_type {
    CM_REQ = 1,  /* client -> server: please create your end */
    CM_REP,      /* server -> client: my QP (and credits) */
    CM_RTU,      /* client -> server: my QP ("ready to use" once you are RTS) */
    CM_ACK,      /* server -> client: my QP is RTR/RTS, you may send */
    CM_DISC,     /* client -> server: my end is closed and idle, destroy yours */
    CM_DISC_ACK, /* server -> client: my end is gone (also for a repeated DISC) */
    CM_DISC_ASK, /* server -> client: I am at my cap, please close when you can */
    CM_BROKEN,   /* server -> client: my end of your connection broke, set it up anew */
    CM_LOOKUP,   /* anyone -> a holder's data server: the directory entry of `rank` */
    CM_ENTRY,    /* holder's data server -> the asker: that entry (odcm/directory.c) */
};

struct cm_msg {
    uint8_t type;         /* enum cm_msg_type */
    uint8_t protocol;     /* enum cfg_protocol of the client */
    uint16_t gather;      /* REP/ACK: entries the server's QP gathers per RDMA write */
    int32_t rank;         /* the client (requester) */
    int32_t node;         /* the server's node */
    uint32_t epoch;       /* the client's connection attempt */
    int32_t credits;      /* REP/ACK: initial request credits */
    struct verbs_addr qp; /* REP: the server's RC QP; RTU (and serial REQ): the client's */
    uint64_t resume;      /* REP/ACK: the client's requests below this number were served */
};
/* A CM_ENTRY carries, of the rank it names: its client UD address in qp, its UD data QP number
 * in credits and, if it is its node's master, its data server's two UD QP numbers in resume
 * (connections << 32 | data). */

/* Bounds of the fields, checked by the receivers before anything else. */
#define CM_QPN_MASK    0xffffffu /* QP numbers and PSNs are 24-bit */
#define CM_CREDITS_MAX 1024      /* the range of ARMCI_SERVER_CREDITS */
#define CM_GATHER_MAX  32        /* RC_QP_MAX_SGE */
/* Receive buffers start with room for a GRH, whether the datagram carried one or not. */
#define UD_GRH_BYTES 40

/*
 * Who sent a datagram, as the device says (not as the message says): the
 * source QP and LID of the work completion and, when it carried a GRH
 * (always on RoCE), the source GID from it.
 */
struct ud_sender {
    uint32_t qpn;
    uint16_t lid;
    bool has_gid;
    uint8_t gid[16];
};

/*
 * Receives one well-formed-length connection message and its sender (copies:
 * valid during the call only). The receiver checks the fields and that the
 * sender is who the message claims to come from (ud_sender_is).
 */
typedef void (*cm_msg_fn)(void *ctx, const struct ud_sender *from, const struct cm_msg *m);

/* Receives one datagram of a data endpoint (ud_create_data): `len` bytes at `data`, valid
 * during the call only, and its sender. Nothing in it is checked yet. */
typedef void (*ud_bytes_fn)(void *ctx, const struct ud_sender *from, const void *data, size_t len);

/* Send buffers of a connection-message endpoint. */
#define UD_SEND_BUFS 16

struct ud_endpoint {
    const char *who;    /* names the endpoint in warnings */
    char recv_what[48]; /* names its receive buffers */
    struct ibv_qp *qp;
    uint32_t qkey;
    struct recv_pool recv;
    struct buffer_pool send; /* one datagram each; a buffer is free again at its completion */
    struct intmap ah;        /* peer key -> struct ibv_ah */
    cm_msg_fn on_message;    /* a connection-message endpoint (ud_create) */
    ud_bytes_fn on_bytes;    /* or a data endpoint (ud_create_data) */
    void *ctx;
    size_t buf_size;          /* GRH space and the largest datagram */
    enum wr_tag send_tag;     /* of its sends' completions */
    uint32_t send_generation; /* of the sends posted since the QP was last reset */
    long sent;
    long received;
    long refused;             /* datagrams dropped as malformed or forged */
    long restarts;            /* times the QP was reset after a failed work request */
    double checked_at;        /* when ud_check last asked the device for the QP's state */
    long sends_done;          /* send completions polled (of this generation or not) */
    long sends_done_at_check; /* sends_done at that check, when a send was out; else -1 */
    struct ibv_ah *self_ah;   /* for the probes the QP sends itself */
    bool probe_due;           /* reset since the last check: a probe is to be sent */
    double probe_sent_at;     /* when the last reset's probe left; 0: none out */
    /* ud_reply's address handles, by send buffer: destroyed when that send completes */
    struct ibv_ah *reply_ah[UD_SEND_BUFS];
};

/* Entries a UD endpoint needs on the CQ its sends complete on, and on its receive CQ
 * (twice its buffers: after a reset of the QP, completions of before may still be there). */
int ud_send_cq_entries(void);
int ud_recv_cq_entries(void);

/* Receive buffers a connection-message endpoint may grow to. */
#define UD_RECV_BUFS 64

/* A connection-message endpoint. Sends complete on send_ep, receives on recv_ep (they may be
 * the same endpoint); nrecv receive buffers, growing in chunks of nrecv up to UD_RECV_BUFS
 * (ud_grow_recv). */
void ud_create(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
               const char *who, int nrecv, cm_msg_fn on_message, void *ctx);
/*
 * A data endpoint: datagrams of up to `datagram` bytes, nsend send and
 * nrecv receive buffers (growing up to max_recv: ud_grow_recv), completions
 * tagged WR_TAG_DGRAM (so send_ep and recv_ep must be different CQs, or CQs
 * without other users of that tag). Receives go to fn unchecked: the caller
 * checks every byte.
 */
void ud_create_data(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
                    const char *who, size_t datagram, int nsend, int nrecv, int max_recv,
                    ud_bytes_fn fn, void *ctx);
/* Posts receive buffers until there are at least `want` (at most max_recv), in chunks of
 * nrecv. */
void ud_grow_recv(struct ud_endpoint *u, int want);
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

/*
 * Answers the sender of a datagram, whoever it is, through an address handle of its own
 * (destroyed when the send completes): a handle cached by a key the sender chose could be
 * pointed at another port. For a connection-message endpoint; false as ud_send.
 */
bool ud_reply(struct ud_endpoint *u, const struct ud_sender *to, const struct cm_msg *msg);

/* Sends len bytes (at most the endpoint's datagram) to peer, like ud_send. */
bool ud_send_bytes(struct ud_endpoint *u, int peer_key, const struct verbs_addr *to,
                   const void *data, size_t len);

/*
 * Resets the QP if the device has it in the error state although no failed completion said
 * so (rxe, flooded with datagrams too long for the buffers, was seen to leave a data
 * server's QP there: deaf for good), if every send buffer stayed busy from one check to
 * the next with no send completing (a server, which only answers, would be mute for good),
 * or if since its last reset it has not heard the probe it sent itself (rxe was seen to
 * leave a reset QP deaf, reporting RTS). Looks at most twice a second; called by the
 * clients' retransmission timers (ondemand.c, dgram.c: a client that retransmits to a deaf
 * server, or from a deaf QP, keeps retransmitting) and by the data server when it is idle.
 */
void ud_check(struct ud_endpoint *u);

/* A reset QP's probe of itself (ud.c): what ud_deliver looks for before anything else. */
struct ud_probe {
    uint32_t magic;
    uint32_t generation; /* the send generation it was sent in */
};
#define UD_PROBE_MAGIC 0x55445052u /* "UDPR" */

/* Whether the datagram at data is u's own probe of this generation (it then hears again). */
bool ud_probe_returned(struct ud_endpoint *u, const struct ud_sender *from, const void *data,
                       size_t len);

/* The Q_Key of this job's UD channel (derived from the job id). */
uint32_t ud_job_qkey(void);

/* ---- receiving (ud_datagram.c: no verbs calls, so it can be tested alone) ---- */

/*
 * Handles the successful receive completion wc whose buffer is buf (GRH
 * space first): a datagram of the wrong length is refused, a well-formed one
 * goes to u->on_message with its sender. Reads at most wc->byte_len bytes.
 */
void ud_deliver(struct ud_endpoint *u, const struct ibv_wc *wc, const void *buf);

/* Whether the datagram came from the UD QP published as `a`: its QP number,
 * and its LID (InfiniBand) or GID (RoCE, or a forced GID index). */
bool ud_sender_is(const struct ud_sender *from, const struct verbs_addr *a);

/* Whether the QP address `qp` carried in a message is a plausible QP of the port at
 * `port` (same LID and GID, 24-bit QP number and PSN). */
bool ud_qp_addr_valid(const struct verbs_addr *qp, const struct verbs_addr *port);

/* A datagram dropped: counted, and the first few are warned about, naming the sender. */
void ud_refuse(struct ud_endpoint *u, const struct ud_sender *from, const char *why);
/* Datagrams refused so far (from any thread). */
long ud_refused(const struct ud_endpoint *u);
/* Times the QP was reset so far (from any thread). */
long ud_restarts(const struct ud_endpoint *u);

#endif
