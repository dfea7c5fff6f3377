/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * softib internals: the process-local verbs objects and the entry points
 * modules offer each other. The shared-memory fabric is in fabric.h.
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
    pthread_mutex_t lock; /* qps list, graveyard, pd ids */
    struct sib_qp *qps;   /* all live QPs, for progress */
    struct sib_obj *grave_oldest; /* next_dead leads to the newer ones */
    struct sib_obj *grave_newest;
    uint32_t graves;
    uint32_t next_pd;
    uint32_t pending; /* atomic: WQEs and held datagrams waiting for progress */
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
 * Batches (rc.c): a run of ready RDMA WRITEs or READs at the head of an RC
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
    struct sib_batch *batch; /* NULL until the first batch */
    struct sib_cq *scq, *rcq;
    struct sib_srq *srq;
    struct sib_pd *pd;
};

/* ---- object helpers (device.c) ---- */

void sib_obj_init(struct sib_obj *o, enum sib_kind kind, void *mem);
bool sib_obj_ok(const struct sib_obj *o, enum sib_kind kind);
void sib_obj_bury(struct sib_context *ctx, struct sib_obj *o);
struct sib_context *sib_ctx(struct ibv_context *ibctx); /* NULL if not a live softib context */
struct sib_pd *sib_pd(struct ibv_pd *pd);
struct sib_cq *sib_cq(struct ibv_cq *cq);
struct sib_srq *sib_srq(struct ibv_srq *srq);
struct sib_qp *sib_qp(struct ibv_qp *qp);

/* errno helpers: set errno and return NULL / -1 / the code */
void *sib_null(int err);
int sib_err(int err);

/* ---- device.c ---- */

void sib_ctx_pending_add(struct sib_context *ctx, int n);
union ibv_gid sib_gid(uint16_t lid, int index);
int sib_gid_count(void);

/* ---- addr.c ---- */

int sib_check_ah_attr(const struct ibv_ah_attr *ah); /* 0 or errno */
bool sib_ah_get(struct ibv_ah *ah, struct ibv_ah_attr *out);
bool sib_gid_is(const union ibv_gid *gid, uint16_t lid);
bool sib_av_reaches(const struct ibv_ah_attr *av, uint32_t dest_ctx);
void sib_grh_build(struct ibv_grh *grh, const struct ibv_ah_attr *av, uint16_t src_lid,
                   uint32_t paylen);

/* ---- event.c: wake-up sockets and async events ---- */

int sib_sock_open(struct sib_addr *addr); /* bound, autobind abstract name; fd or -errno */
void sib_sock_wake(const struct sib_addr *addr);
int sib_sock_drain(int fd); /* number of datagrams consumed */
bool sib_sock_readable(int fd);
bool sib_fd_nonblocking(int fd);
int sib_wait_fd(int fd, int timeout_ms); /* poll for POLLIN; EINTR tolerated */
void sib_async_post(uint32_t ctx_slot, uint32_t event_type, uint32_t kind, uint32_t slot,
                    uint32_t gen);

/* ---- mr.c ---- */

/* A consistent copy of the MR slot `key` names; false if no such key. */
bool sib_mr_lookup(uint32_t key, bool remote, struct sib_fmr *out);
/* Translate [iova, iova+len) through the MR; false if out of bounds or access missing. */
bool sib_mr_range(const struct sib_fmr *mr, uint64_t iova, uint64_t len, uint32_t need,
                  uint64_t *va);

/* ---- cq.c ---- */

/* Queue a completion; false when the CQ overran (the completion is lost). */
bool sib_cq_push(uint32_t cq_slot, const struct sib_cqe *cqe, bool solicited);
void sib_cq_chan_detach(struct sib_cq *cq);

/* ---- rq.c: receive queues of QPs and SRQs ---- */

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

/* ---- qp.c ---- */

void sib_cqe_init(struct sib_cqe *e, uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
                  uint32_t qpn);
void sib_qp_flush_rq_locked(struct sib_fqp *q); /* q->lock held */
void sib_qp_to_err_locked(struct sib_fqp *q);   /* q->lock held: ERR, flush receive queue */
void sib_qp_fail(struct sib_qp *qp);            /* owner: own QP to ERR */
struct sib_fqp *sib_qp_lookup_lock(uint32_t qpn);
void sib_qp_unlock(struct sib_fqp *q);
void sib_qp_destroy_local(struct sib_qp *qp);

/* ---- post.c ---- */

int sib_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int sib_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int sib_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int sib_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
int sib_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

/* ---- engine.c: execution of send queues ---- */

enum sib_step {
    SIB_STEP_DONE, /* the WQE completed (successfully or not) */
    SIB_STEP_WAIT, /* retry at w->not_before */
};

enum sib_batch_step {
    SIB_BATCH_NONE, /* nothing done: the head WQE runs alone */
    SIB_BATCH_DONE, /* one or more WQEs completed (successfully or not) */
    SIB_BATCH_WAIT, /* the head WQE waits for a retransmission at not_before */
};

static inline struct sib_swqe *sib_sq_entry(struct sib_qp *qp, uint64_t seq)
{
    return (struct sib_swqe *)(qp->sq + (seq % qp->sq_cap) * qp->sq_stride);
}

static inline uint8_t *sib_swqe_inline(struct sib_qp *qp, struct sib_swqe *w)
{
    (void)qp;
    return (uint8_t *)&w->sge[w->num_sge];
}

uint64_t sib_sq_run(struct sib_qp *qp); /* sq_lock held; returns next deadline or 0 */
void sib_sq_start(struct sib_qp *qp, struct sib_swqe *w); /* first attempt: arm the retry counts */
enum sib_step sib_sq_fail(struct sib_qp *qp, struct sib_swqe *w, enum ibv_wc_status st);
enum sib_step sib_retry_lost(struct sib_qp *qp, struct sib_swqe *w);
enum sib_step sib_retry_rnr(struct sib_qp *qp, struct sib_swqe *w, uint8_t timer);
void sib_sq_complete(struct sib_qp *qp, struct sib_swqe *w, enum ibv_wc_status st);
uint64_t sib_progress(struct sib_context *ctx); /* returns earliest deadline (0 = none) */
void sib_retire_send(uint32_t qp_slot, uint32_t qpn, uint64_t seq);
uint32_t sib_npkts(uint64_t len, uint32_t mtu);

/* ---- rc.c ---- */
enum sib_step sib_rc_exec(struct sib_qp *qp, struct sib_swqe *w);
/* The head WQE is ready and not started: run it and the ready RDMA WRITEs
 * (READs) after it as one batch. *now: 0 or the current time (set when read). */
enum sib_batch_step sib_rc_batch(struct sib_qp *qp, uint64_t *now);

/* ---- ud.c ---- */
enum sib_step sib_ud_exec(struct sib_qp *qp, struct sib_swqe *w);
void sib_ud_flush_held(struct sib_qp *qp, bool force);

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

/* ---- global state ---- */

extern struct sib_fabric sib_fab; /* this process's fabric */
extern pthread_mutex_t sib_open_lock;
extern struct sib_context *sib_open_list;

#endif /* SIB_H */
