/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * softib internals: the process-local verbs objects and the functions the
 * files offer each other, each under the file that defines it, bottom-up
 * (docs/softib.md, "Modules"). The shared-memory fabric is in fabric.h.
 */
#ifndef SIB_H
#define SIB_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "fabric.h"

#define SIB_EXPORT __attribute__((visibility("default")))

#define sib_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* ---- knobs.c: environment, clock, randomness, cost model ---- */

#define SIB_FABRIC_DIR    "/dev/shm/"
#define SIB_FABRIC_BASE   "softib-fabric-"
#define SIB_FABRIC_PREFIX SIB_FABRIC_DIR SIB_FABRIC_BASE

struct sib_knobs {
    char fabric_path[128]; /* SIB_FABRIC_PREFIX <name> */
    uint64_t fabric_bytes;
    int mtu_enum;        /* IBV_MTU_* of the port */
    bool roce;           /* SOFTIB_LINK_LAYER=ethernet */
    bool link_layer_set; /* the variable was given (so must match the fabric) */
    bool mtu_set;
    double ud_loss;    /* probability a UD datagram is dropped */
    double ud_reorder; /* probability a UD datagram is held back */
    double ud_dup;     /* probability a UD datagram is delivered twice */
    double rc_break;   /* probability an RC work request finds its path broken (QP to ERR) */
    uint32_t port_down_at_ms;  /* SOFTIB_PORT_DOWN: the port goes down this long after open */
    uint32_t port_down_for_ms; /* ... and stays down this long (0: never goes down) */
    bool deferred;     /* execute WRs only from poll_cq/get_cq_event */
    bool ptracer_any;  /* SOFTIB_PTRACER=any: under Yama scope 1, any process may */
    uint64_t seed;
    bool seeded;
    uint32_t wire_latency_us;
    uint32_t wire_mbps; /* megabits per second; 0 = no bandwidth model */
    uint32_t cost_create_qp_us;
    uint32_t cost_init_us;
    uint32_t cost_rtr_us;
    uint32_t cost_rts_us;
    uint32_t cost_destroy_qp_us;
    uint32_t cost_reg_mr_us;
    /* SOFTIB_UD_ERR_SILENT: a failed UD receive leaves its QP in ERR, and nothing completes */
    bool ud_err_silent;
    /* SOFTIB_UD_DEAF_RESET: every other reset of a UD QP leaves it deaf until the next */
    bool ud_deaf_reset;
    /* SOFTIB_UD_SEND_STALL: a UD QP's send queue stops after this many sends (reporting RTS,
     * completing nothing) until the QP is first reset; 0: never */
    uint64_t ud_send_stall;
};

extern struct sib_knobs sib_knobs;

int sib_knobs_load(void); /* once per process; 0 or EINVAL (message printed) */
uint64_t sib_now_ns(void);
void sib_cost(uint32_t us); /* a blocking "firmware command" */
uint64_t sib_rng_seed(uint32_t salt);
double sib_rng01(uint64_t *state);
uint32_t sib_mtu_bytes(int mtu_enum);
bool sib_wire_model(void);

/* ---- local objects ---- */

enum sib_kind {
    SIB_K_CTX = 1,
    SIB_K_PD,
    SIB_K_MR,
    SIB_K_CQ,
    SIB_K_CHAN,
    SIB_K_QP,
    SIB_K_SRQ,
    SIB_K_AH,
};

#define SIB_LIVE 0x51b11feu
#define SIB_DEAD 0xdeadd00u

/*
 * Header of every local object. Destroyed objects are kept (magic DEAD) on
 * their context's graveyard, so a verb called on a recently destroyed object
 * fails with EINVAL instead of touching freed memory. The graveyard holds the
 * last SIB_GRAVEYARD_MAX of them and frees the oldest beyond: a process that
 * creates and destroys QPs all along (connections closed and reopened under a
 * cap) would otherwise grow by one QP record per connection.
 */
#define SIB_GRAVEYARD_MAX 256

struct sib_obj {
    uint32_t magic;
    uint32_t kind;
    struct sib_obj *next_dead;
    void *mem; /* what to free() */
};

struct sib_context {
    struct sib_obj o;
    uint32_t slot; /* fabric context slot */
    uint32_t gen;
    uint16_t lid;
    pid_t pid;
    struct sib_fctx *f;
    pthread_mutex_t lock;         /* qps list, graveyard, pd ids */
    struct sib_qp *qps;           /* all live QPs, for progress */
    struct sib_obj *grave_oldest; /* next_dead leads to the newer ones */
    struct sib_obj *grave_newest;
    uint32_t graves;
    uint32_t next_pd;
    uint32_t pending; /* atomic: WQEs and held datagrams waiting for progress */
    uint8_t port_told; /* SOFTIB_PORT_DOWN: async events posted (0 none, 1 PORT_ERR, 2 both) */
    struct sib_context *next_open;
    struct verbs_context vctx; /* must be last: ibv_context is its last member */
};

struct sib_pd {
    struct ibv_pd ibpd;
    struct sib_obj o;
    uint64_t id;    /* fabric-unique */
    uint32_t users; /* atomic: MRs, QPs, SRQs, AHs */
};

struct sib_mr {
    struct ibv_mr ibmr;
    struct sib_obj o;
    uint32_t slot;
};

struct sib_cq;

struct sib_channel {
    struct ibv_comp_channel ch;
    struct sib_obj o;
    struct sib_addr addr;
    pthread_mutex_t lock; /* cqs */
    struct sib_cq *cqs;
    uint32_t users; /* CQs attached */
};

struct sib_cq {
    struct ibv_cq ibcq;
    struct sib_obj o;
    uint32_t slot;
    uint32_t gen;
    struct sib_fcq *f;
    struct sib_channel *chan;
    struct sib_cq *chan_next;
    uint32_t users; /* atomic: QPs using it */
};

struct sib_srq {
    struct ibv_srq ibsrq;
    struct sib_obj o;
    uint32_t slot;
    struct sib_fsrq *f;
    uint32_t users; /* atomic: QPs attached */
};

struct sib_ah {
    struct ibv_ah ibah;
    struct sib_obj o;
    struct ibv_ah_attr attr;
};

/* What a UD datagram needs besides its payload. */
struct sib_dgram {
    struct ibv_ah_attr ah;
    uint32_t remote_qpn;
    uint32_t remote_qkey;
    uint32_t opcode;
    uint32_t imm;
    uint32_t flags;
};

/* A send work request waiting in the local send queue. */
struct sib_swqe {
    uint64_t wr_id;
    uint64_t seq; /* position in the send queue, for slot accounting */
    uint32_t opcode;
    uint32_t flags;
    uint32_t imm;
    uint32_t num_sge;
    uint32_t inline_len; /* inline data follows the sge array */
    uint32_t rkey;
    uint64_t len;
    uint64_t raddr;
    uint64_t compare_add;
    uint64_t swap;
    struct sib_dgram ud; /* UD addressing, copied at post time */
    uint64_t not_before; /* ns: wire delay, RNR or retransmission timer */
    int32_t retries_left;
    int32_t rnr_left;
    bool started;
    struct ibv_sge sge[];
};

/*
 * Batches (req.c, resp.c): a run of ready RDMA WRITEs or READs at the head of an RC
 * send queue moves with one process_vm_writev/readv. Limits: WQEs per
 * batch, iovecs per side (the kernel's IOV_MAX), and bytes (a WQE that
 * would take the batch past SIB_BATCH_BYTES starts the next one).
 */
#define SIB_BATCH_WQES  64
#define SIB_BATCH_IOV   1024
#define SIB_BATCH_BYTES (4u << 20)

/* Scratch space of a QP's batches (allocated on first use; sq_lock). */
struct sib_batch {
    struct iovec liov[SIB_BATCH_IOV];
    struct iovec riov[SIB_BATCH_WQES];
    int nliov[SIB_BATCH_WQES]; /* local iovecs of each WQE */
};

/* A UD datagram held back by SOFTIB_UD_REORDER. */
struct sib_held {
    struct sib_dgram d;
    uint8_t *data;
    uint32_t len;
    uint64_t since;
};

struct sib_qp {
    struct ibv_qp ibqp;
    struct sib_obj o;
    uint32_t slot;
    struct sib_fqp *f;
    struct sib_context *ctx;
    struct sib_qp *next; /* ctx->qps */
    pthread_mutex_t sq_lock;
    uint8_t *sq; /* ring of cap entries of sq_stride bytes */
    uint32_t sq_cap;
    uint32_t sq_stride;
    uint32_t max_inline;
    uint64_t sq_head;   /* oldest pending */
    uint64_t sq_tail;   /* next free; also the next seq */
    uint64_t wire_free; /* ns when the modeled wire is free again */
    uint64_t rng;
    struct sib_held *held;
    uint64_t ud_sends_started; /* SOFTIB_UD_SEND_STALL: sends started before any reset */
    bool ud_was_reset;         /* a reset ends SOFTIB_UD_SEND_STALL's stall for good */
    struct sib_batch *batch;   /* NULL until the first batch */
    struct sib_cq *scq, *rcq;
    struct sib_srq *srq;
    struct sib_pd *pd;
};

/* Entry seq of a QP's send queue, and the inline data of a send WQE. */
static inline struct sib_swqe *sib_sq_entry(struct sib_qp *qp, uint64_t seq)
{
    return (struct sib_swqe *)(qp->sq + (seq % qp->sq_cap) * qp->sq_stride);
}

static inline uint8_t *sib_swqe_inline(struct sib_qp *qp, struct sib_swqe *w)
{
    (void)qp;
    return (uint8_t *)&w->sge[w->num_sge];
}

/* ---- pool.c: the object base ---- */

extern struct sib_fabric sib_fab; /* this process's fabric */
extern pthread_mutex_t sib_open_lock;
extern struct sib_context *sib_open_list;

void sib_obj_init(struct sib_obj *o, enum sib_kind kind, void *mem);
void sib_obj_bury(struct sib_context *ctx, struct sib_obj *o);
void sib_ctx_pending_add(struct sib_context *ctx, int n);

/* errno helpers: set errno and return NULL / -1 / the code */
void *sib_null(int err);
int sib_err(int err);

/* From a verbs handle to our object: NULL unless it is a live one of ours (inline). */
static inline bool sib_obj_ok(const struct sib_obj *o, enum sib_kind kind)
{
    return o && o->magic == SIB_LIVE && o->kind == (uint32_t)kind;
}

static inline struct sib_context *sib_ctx(struct ibv_context *ibctx)
{
    struct sib_context *ctx;

    if (!ibctx || ibctx->abi_compat != __VERBS_ABI_IS_EXTENDED)
        return NULL;
    ctx = sib_container_of(ibctx, struct sib_context, vctx.context);
    return sib_obj_ok(&ctx->o, SIB_K_CTX) ? ctx : NULL;
}

static inline struct sib_pd *sib_pd(struct ibv_pd *h)
{
    struct sib_pd *x = h ? sib_container_of(h, struct sib_pd, ibpd) : NULL;

    return x && sib_obj_ok(&x->o, SIB_K_PD) ? x : NULL;
}

static inline struct sib_cq *sib_cq(struct ibv_cq *h)
{
    struct sib_cq *x = h ? sib_container_of(h, struct sib_cq, ibcq) : NULL;

    return x && sib_obj_ok(&x->o, SIB_K_CQ) ? x : NULL;
}

static inline struct sib_channel *sib_chan(struct ibv_comp_channel *h)
{
    struct sib_channel *x = h ? sib_container_of(h, struct sib_channel, ch) : NULL;

    return x && sib_obj_ok(&x->o, SIB_K_CHAN) ? x : NULL;
}

static inline struct sib_srq *sib_srq(struct ibv_srq *h)
{
    struct sib_srq *x = h ? sib_container_of(h, struct sib_srq, ibsrq) : NULL;

    return x && sib_obj_ok(&x->o, SIB_K_SRQ) ? x : NULL;
}

static inline struct sib_qp *sib_qp(struct ibv_qp *h)
{
    struct sib_qp *x = h ? sib_container_of(h, struct sib_qp, ibqp) : NULL;

    return x && sib_obj_ok(&x->o, SIB_K_QP) ? x : NULL;
}

/* ---- event.c: wake-up sockets and async events ---- */

int sib_sock_open(struct sib_addr *addr); /* bound, autobind abstract name; fd or -errno */
void sib_sock_wake(const struct sib_addr *addr);
int sib_sock_drain(int fd); /* number of datagrams consumed */
bool sib_sock_readable(int fd);
bool sib_fd_nonblocking(int fd);
int sib_wait_fd(int fd, int timeout_ms); /* poll for POLLIN; EINTR tolerated */
void sib_async_post(uint32_t ctx_slot, uint32_t event_type, uint32_t kind, uint32_t slot,
                    uint32_t gen);
int sib_get_async_event(struct ibv_context *context, struct ibv_async_event *event);
void sib_ack_async_event(struct ibv_async_event *event);

/* ---- xfer.c: moving bytes between address spaces ---- */

/* The process behind a QP or an MR, as its context recorded it: a pid alone
 * may name another process once the owner is dead and the pid reused. */
struct sib_peer {
    uint32_t slot; /* its context slot */
    int32_t pid;
    uint64_t start_time;
};

static inline struct sib_peer sib_qp_peer(const struct sib_fqp *q)
{
    return (struct sib_peer){.slot = q->owner, .pid = q->pid, .start_time = q->start_time};
}

static inline struct sib_peer sib_mr_peer(const struct sib_fmr *m)
{
    return (struct sib_peer){.slot = m->owner, .pid = m->pid, .start_time = m->start_time};
}

/* Whether p's process is gone: through the pidfd kept for it (one poll, the check every copy
 * makes), not /proc (an open, a read and a parse: tens of microseconds on a busy host). */
bool sib_peer_gone(const struct sib_peer *p);
/* local <-> remote iovecs in the peer's address space; 0, ESRCH (the peer
 * is gone: nothing was copied to or from anyone else) or EFAULT */
int sib_xfer(const struct sib_peer *p, bool to_remote, const struct iovec *local, int nlocal,
             const struct iovec *remote, int nremote);
/* The same over up to SIB_BATCH_IOV iovecs a side, which it consumes; on a
 * failure *done says how many bytes moved before it. */
int sib_xfer_vec(const struct sib_peer *p, bool to_remote, struct iovec *local, int nlocal,
                 struct iovec *remote, int nremote, uint64_t *done);
int sib_atomic(const struct sib_peer *p, uint64_t va, uint32_t opcode, uint64_t cmp_add,
               uint64_t swap, uint64_t *orig);
void sib_peers_forget(void); /* the last context closed: drop the peers' pidfds */

/* iovecs for the poster's SGEs: checks lkey, PD, bounds and `need` access. */
enum ibv_wc_status sib_local_iov(struct sib_qp *qp, const struct ibv_sge *sge, uint32_t n,
                                 uint32_t need, struct iovec *iov, int *niov, uint64_t *total);
/* iovecs for a receive WQE, clipped to len bytes: SUCCESS, LOC_PROT_ERR or LOC_LEN_ERR. */
enum ibv_wc_status sib_recv_iov(uint64_t pd, const struct sib_rwqe *r, uint64_t len,
                                struct iovec *iov, int *niov);

/* Clip an iovec array to len bytes; returns the new count. */
int sib_iov_clip(struct iovec *iov, int n, uint64_t len);

/* ---- counters.c ---- */

#define SIB_COUNT(fctx, field, n) \
    __atomic_fetch_add(&(fctx)->cnt.field, (uint64_t)(n), __ATOMIC_RELAXED)
void sib_counters_retire(const struct sib_fctx *fc); /* keep a closing context's totals */

/* ---- device.c: the device and its contexts ---- */

struct ibv_device **sib_get_device_list(int *num_devices);
void sib_free_device_list(struct ibv_device **list);
const char *sib_get_device_name(struct ibv_device *device);
__be64 sib_get_device_guid(struct ibv_device *device);
struct ibv_context *sib_open_device(struct ibv_device *device);
void sib_ctx_close(struct sib_context *ctx); /* its QPs destroyed already */
/* SOFTIB_PORT_DOWN: posts IBV_EVENT_PORT_ERR when the port's down window has begun and
 * IBV_EVENT_PORT_ACTIVE when it has ended, once each (called by the verbs that poll). */
void sib_port_watch(struct sib_context *ctx);
int sib_query_device(struct ibv_context *context, struct ibv_device_attr *attr);
int sib_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr,
                   size_t len);
int sib_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);
int sib_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey);

/* ---- pd.c ---- */

struct ibv_pd *sib_alloc_pd(struct ibv_context *context);
int sib_dealloc_pd(struct ibv_pd *ibpd);

/* ---- ah.c: addressing and address handles ---- */

union ibv_gid sib_gid(uint16_t lid, int index);
int sib_gid_count(void);
int sib_check_ah_attr(const struct ibv_ah_attr *ah); /* 0 or errno */
bool sib_ah_get(struct ibv_ah *ah, struct ibv_ah_attr *out);
bool sib_gid_is(const union ibv_gid *gid, uint16_t lid);
bool sib_av_reaches(const struct ibv_ah_attr *av, uint32_t dest_ctx);
void sib_grh_build(struct ibv_grh *grh, const struct ibv_ah_attr *av, uint16_t src_lid,
                   uint32_t paylen);
struct ibv_ah *sib_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
int sib_destroy_ah(struct ibv_ah *ibah);
int sib_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
                        struct ibv_grh *grh, struct ibv_ah_attr *ah_attr);
struct ibv_ah *sib_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
                                     uint8_t port_num);

/* ---- mr.c ---- */

/* A consistent copy of the MR slot `key` names; false if no such key. */
bool sib_mr_lookup(uint32_t key, bool remote, struct sib_fmr *out);
/* Translate [iova, iova+len) through the MR; false if out of bounds or access missing. */
bool sib_mr_range(const struct sib_fmr *mr, uint64_t iova, uint64_t len, uint32_t need,
                  uint64_t *va);
/* ibv_reg_mr and its _iova variants: access as ibv_reg_mr_iova2's. */
struct ibv_mr *sib_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
                          unsigned int access);
int sib_dereg_mr(struct ibv_mr *ibmr);

/* ---- cq.c: CQs and completion channels ---- */

void sib_cqe_init(struct sib_cqe *e, uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
                  uint32_t qpn);
/* Queue a completion; false when the CQ overran (the completion is lost). */
bool sib_cq_push(uint32_t cq_slot, const struct sib_cqe *cqe, bool solicited);
/* Take up to n completions (the owner); send completions free their send-queue slots. */
int sib_cq_poll(struct sib_cq *cq, int n, struct ibv_wc *wc);
/* Claim one CQ of the channel with a pending event; *more says whether others remain. */
struct sib_cq *sib_chan_take(struct sib_channel *c, bool *more);
void sib_cq_chan_detach(struct sib_cq *cq);
int sib_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
struct ibv_comp_channel *sib_create_comp_channel(struct ibv_context *context);
int sib_destroy_comp_channel(struct ibv_comp_channel *channel);
void sib_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents);
struct ibv_cq *sib_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int comp_vector);
int sib_destroy_cq(struct ibv_cq *ibcq);
int sib_resize_cq(struct ibv_cq *cq, int cqe);

/* ---- rq.c: receive queues of QPs and SRQs, where a message lands ---- */

int sib_rq_alloc(struct sib_rq *rq, uint32_t cap, uint32_t max_sge);
void sib_rq_free(struct sib_rq *rq);
int sib_rq_post(struct sib_rq *rq, const struct ibv_recv_wr *wr);
struct sib_rwqe *sib_rq_peek(struct sib_rq *rq);
void sib_rq_pop(struct sib_rq *rq);
uint32_t sib_rq_count(const struct sib_rq *rq);
/* A receive WQE taken off its queue: a copy, so that the queue is free again
 * (an SRQ's lock released) while the payload moves into its buffers. */
struct sib_rwqe_taken {
    uint64_t wr_id;
    uint32_t num_sge;
    uint32_t pad;
    struct ibv_sge sge[SIB_MAX_SGE];
};
/* As the struct sib_rwqe it was copied from, for the functions that read one. */
static inline const struct sib_rwqe *sib_taken_rwqe(const struct sib_rwqe_taken *t)
{
    return (const struct sib_rwqe *)(const void *)t;
}
/* Takes the next receive WQE for a message to QP q (q->lock held) from its own
 * queue or its SRQ, and its PD. False when there is none (an RNR, or a drop on UD). */
bool sib_dest_take(struct sib_fqp *q, struct sib_rwqe_taken *out, uint64_t *pd);

/* ---- srq.c ---- */

struct ibv_srq *sib_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *init);
int sib_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask);
int sib_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int sib_destroy_srq(struct ibv_srq *ibsrq);
int sib_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* ---- qp.c ---- */

void sib_qp_flush_rq_locked(struct sib_fqp *q); /* q->lock held */
void sib_qp_to_err_locked(struct sib_fqp *q);   /* q->lock held: ERR, flush receive queue */
void sib_qp_fail(struct sib_qp *qp);            /* owner: own QP to ERR */
struct sib_fqp *sib_qp_lookup_lock(uint32_t qpn);
void sib_qp_unlock(struct sib_fqp *q);
/* drop_sq and settle_sq are what the send queue does (req.c's sib_sq_drop and
 * sib_sq_settle), handed down by verbs.c: the QP does not call the engine. */
void sib_qp_destroy_local(struct sib_qp *qp, void (*drop_sq)(struct sib_qp *qp));
struct ibv_qp *sib_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a);
int sib_destroy_qp(struct ibv_qp *ibqp, void (*drop_sq)(struct sib_qp *qp));
int sib_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
                 struct ibv_qp_init_attr *init);
int sib_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
                  void (*settle_sq)(struct sib_qp *qp, int next));

/* ---- post.c ---- */

int sib_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int sib_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* ---- the engine: comp.c, resp.c, req.c ---- */

enum sib_step {
    SIB_STEP_DONE, /* the WQE completed (successfully or not) */
    SIB_STEP_WAIT, /* retry at w->not_before */
};

enum sib_batch_step {
    SIB_BATCH_NONE, /* nothing done: the head WQE runs alone */
    SIB_BATCH_DONE, /* one or more WQEs completed (successfully or not) */
    SIB_BATCH_WAIT, /* the head WQE waits for a retransmission at not_before */
};

/* ---- comp.c: the completer ---- */

void sib_sq_complete(struct sib_qp *qp, struct sib_swqe *w, enum ibv_wc_status st);
enum sib_step sib_sq_fail(struct sib_qp *qp, struct sib_swqe *w, enum ibv_wc_status st);
enum sib_step sib_retry_lost(struct sib_qp *qp, struct sib_swqe *w);
enum sib_step sib_retry_rnr(struct sib_qp *qp, struct sib_swqe *w, uint8_t timer);

/* ---- resp.c: the responder ---- */

enum sib_rc_verdict {
    SIB_RC_OK,
    SIB_RC_LOST, /* dropped on the wire: retransmit */
    SIB_RC_RNR,  /* no receive WQE: RNR NAK */
    SIB_RC_NAK,  /* fatal NAK: requester completes with `status` */
};

/* One RC request: the requester fills qp, w and the local iovecs. */
struct sib_rc_op {
    struct sib_qp *qp;
    struct sib_swqe *w;
    struct sib_fqp *dest; /* locked */
    struct iovec liov[SIB_MAX_SGE];
    int nl;
    enum ibv_wc_status status; /* SIB_RC_NAK: the requester's completion */
    uint8_t rnr_timer;         /* SIB_RC_RNR: the responder's min_rnr_timer */
};

enum sib_rc_verdict sib_resp_rc(struct sib_rc_op *op);
/* n ready RDMA WRITEs (READs) at the head of qp's send queue, local iovecs in b:
 * how many moved (0 = none), or -1 when the responder's process is gone. */
int sib_resp_rc_batch(struct sib_qp *qp, struct sib_batch *b, int n, bool write);
void sib_resp_ud(struct sib_qp *qp, const struct sib_dgram *d, const struct iovec *liov, int nl,
                 uint32_t len);

/* ---- req.c: the requester ---- */

uint64_t sib_sq_run(struct sib_qp *qp); /* sq_lock held; returns next deadline or 0 */
void sib_sq_start(struct sib_qp *qp, struct sib_swqe *w); /* first attempt: arm the retry counts */
uint64_t sib_progress(struct sib_context *ctx);           /* returns earliest deadline (0 = none) */
void sib_sq_drop(struct sib_qp *qp);                      /* sq_lock held: no completions */
void sib_sq_settle(struct sib_qp *qp, int next);          /* sq_lock held: after a state change */

#endif /* SIB_H */
