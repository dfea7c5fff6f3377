/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs: create/destroy/query, and the state machine of ibv_modify_qp
 * with the attribute masks the IB spec (and the kernel's ib_modify_qp_is_ok
 * table that rdma-core providers rely on) require at each transition; the
 * lookup of a QP by its number and its move to the error state, which the
 * engine uses.
 *
 * The QP does not call the engine above it: what a destroy or a state change
 * does to the local send queue (req.c's sib_sq_drop, sib_sq_settle) is
 * handed down by the caller (verbs.c) as a function pointer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sib.h"

#define QP_ACCESS                                                                \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
     IBV_ACCESS_REMOTE_ATOMIC)

/* ---- lookup by QPN (any process) ---- */

struct sib_fqp *sib_qp_lookup_lock(uint32_t qpn)
{
    struct sib_fqp *q;

    if (qpn > 0xffffff || !(qpn >> SIB_QP_SLOT_BITS))
        return NULL;
    q = sib_fqp_at(&sib_fab, qpn & (SIB_MAX_QP - 1));
    if (__atomic_load_n(&q->qpn, __ATOMIC_ACQUIRE) != qpn)
        return NULL;
    sib_lock(&q->lock);
    if (q->qpn != qpn) {
        sib_unlock(&q->lock);
        return NULL;
    }
    return q;
}

void sib_qp_unlock(struct sib_fqp *q)
{
    sib_unlock(&q->lock);
}

/* ---- errors and flushing (q->lock held) ---- */

void sib_qp_flush_rq_locked(struct sib_fqp *q)
{
    struct sib_rwqe *r;
    struct sib_cqe e;

    if (q->srq)
        return; /* SRQ WQEs belong to the SRQ, not to this QP */
    while ((r = sib_rq_peek(&q->rq))) {
        sib_cqe_init(&e, r->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, q->qpn);
        sib_rq_pop(&q->rq);
        sib_cq_push(q->recv_cq, &e, false);
        SIB_COUNT(sib_fctx_at(&sib_fab, q->owner), wc_flushed, 1);
    }
}

void sib_qp_to_err_locked(struct sib_fqp *q)
{
    if (q->state == IBV_QPS_ERR)
        return;
    __atomic_store_n(&q->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
    sib_qp_flush_rq_locked(q);
    if (q->srq)
        sib_async_post(q->owner, IBV_EVENT_QP_LAST_WQE_REACHED, SIB_K_QP, q->qpn & (SIB_MAX_QP - 1),
                       q->qpn);
}

void sib_qp_fail(struct sib_qp *qp)
{
    sib_lock(&qp->f->lock);
    sib_qp_to_err_locked(qp->f);
    sib_unlock(&qp->f->lock);
}

/* ---- create / destroy ---- */

static int check_caps(const struct ibv_qp_init_attr *a)
{
    if (a->cap.max_send_wr > SIB_MAX_WR || a->cap.max_recv_wr > SIB_MAX_WR)
        return ENOMEM; /* what rxe answers for queues it cannot size */
    if (a->cap.max_send_sge > SIB_MAX_SGE || a->cap.max_recv_sge > SIB_MAX_SGE ||
        a->cap.max_inline_data > SIB_MAX_INLINE)
        return EINVAL;
    return 0;
}

/*
 * Slots are handed out in turn (the search starts where the last one, of any
 * process, stopped), so a freed slot and its QPN are reused as late as
 * possible: a QPN comes back only after 63 generations of its slot, that is
 * after at least 63 x qp_window QPs created. The turn goes round the first
 * qp_window slots only, not the whole table: a job that creates and destroys
 * QPs all along (connections closed and reopened under a cap) would otherwise
 * walk all SIB_MAX_QP slots, some 60 MB of shared table that becomes resident
 * in every process that looks at it, about 230 bytes more per QP created.
 * The window doubles when a search had to pass half of it, so that searches
 * stay short as live QPs grow; slots beyond it have never been handed out.
 */
#define QP_WINDOW_FIRST 1024u

/* Global lock held. */
static int qp_slot_alloc(uint32_t *idx)
{
    struct sib_hdr *h = sib_fab.hdr;

    if (h->qp_window < QP_WINDOW_FIRST)
        h->qp_window = QP_WINDOW_FIRST;
    for (uint32_t n = 0; n < h->qp_window; n++) {
        uint32_t i = (h->next_qp_slot + n) % h->qp_window;

        if (!sib_fqp_at(&sib_fab, i)->qpn) {
            if (n >= h->qp_window / 2 && h->qp_window < SIB_MAX_QP)
                h->qp_window *= 2;
            h->next_qp_slot = (i + 1) % h->qp_window;
            *idx = i;
            return 0;
        }
    }
    if (h->qp_window == SIB_MAX_QP)
        return ENOMEM;
    *idx = h->qp_window; /* the window is full: the first slot beyond it */
    h->qp_window *= 2;
    h->next_qp_slot = *idx + 1;
    return 0;
}

static int fabric_qp_init(struct sib_qp *qp, struct sib_context *ctx,
                          const struct ibv_qp_init_attr *a)
{
    struct sib_fqp *f;
    uint32_t idx;
    int rc;

    sib_lock(&sib_fab.hdr->lock);
    rc = qp_slot_alloc(&idx);
    f = rc ? NULL : sib_fqp_at(&sib_fab, idx);
    if (f)
        rc =
            sib_rq_alloc(&f->rq, a->srq ? 0 : a->cap.max_recv_wr, a->srq ? 0 : a->cap.max_recv_sge);
    if (rc) {
        sib_unlock(&sib_fab.hdr->lock);
        return rc;
    }
    sib_lock_lazy_init(&f->lock, &f->lock_ready);
    f->gen = f->gen % 63 + 1; /* the QPN is <gen:6><slot:18>, never 0 or 1 */
    f->owner = ctx->slot;
    f->pid = ctx->pid;
    f->start_time = ctx->f->start_time;
    f->type = (uint8_t)a->qp_type;
    f->state = IBV_QPS_RESET;
    f->sq_sig_all = a->sq_sig_all != 0;
    f->port = 1;
    f->pkey_index = 0;
    f->path_mtu = IBV_MTU_1024;
    f->timeout = f->retry_cnt = f->rnr_retry = f->min_rnr_timer = 0;
    f->max_rd_atomic = f->max_dest_rd_atomic = 0;
    f->overrun_reported = 0;
    f->access = 0;
    f->qkey = 0;
    f->dest_qpn = 0;
    f->rq_psn = f->sq_psn = 0;
    f->send_cq = qp->scq->slot;
    f->recv_cq = qp->rcq->slot;
    f->srq = qp->srq ? qp->srq->slot + 1 : 0;
    f->pd = qp->pd->id;
    f->cap = a->cap;
    memset(&f->ah, 0, sizeof(f->ah));
    f->sq_retired = 0;
    f->owner_ptr = (uintptr_t)&qp->ibqp;
    __atomic_store_n(&f->qpn, (f->gen << SIB_QP_SLOT_BITS) | idx, __ATOMIC_RELEASE);
    sib_unlock(&sib_fab.hdr->lock);
    qp->slot = idx;
    qp->f = f;
    return 0;
}

static int qp_resolve(struct sib_qp *qp, struct ibv_pd *ibpd, const struct ibv_qp_init_attr *a)
{
    qp->pd = sib_pd(ibpd);
    qp->scq = sib_cq(a->send_cq);
    qp->rcq = sib_cq(a->recv_cq);
    qp->srq = a->srq ? sib_srq(a->srq) : NULL;
    if (!qp->pd || !qp->scq || !qp->rcq || (a->srq && !qp->srq))
        return EINVAL;
    if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UD)
        return EOPNOTSUPP;
    if (qp->scq->ibcq.context != ibpd->context || qp->rcq->ibcq.context != ibpd->context)
        return EINVAL;
    return check_caps(a);
}

struct ibv_qp *sib_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a)
{
    struct sib_context *ctx = ibpd ? sib_ctx(ibpd->context) : NULL;
    struct sib_qp *qp;
    int rc;

    if (!ctx || !a)
        return sib_null(EINVAL);
    qp = calloc(1, sizeof(*qp));
    if (!qp)
        return sib_null(ENOMEM);
    rc = qp_resolve(qp, ibpd, a);
    if (rc) {
        free(qp);
        return sib_null(rc);
    }
    sib_cost(sib_knobs.cost_create_qp_us);
    qp->sq_cap = a->cap.max_send_wr ? a->cap.max_send_wr : 1;
    qp->max_inline = a->cap.max_inline_data;
    qp->sq_stride = (uint32_t)((sizeof(struct sib_swqe) +
                                a->cap.max_send_sge * sizeof(struct ibv_sge) + qp->max_inline + 7) &
                               ~7ul);
    qp->sq = calloc(qp->sq_cap, qp->sq_stride);
    rc = qp->sq ? fabric_qp_init(qp, ctx, a) : ENOMEM;
    if (rc) {
        free(qp->sq);
        free(qp);
        return sib_null(rc);
    }
    qp->ctx = ctx;
    pthread_mutex_init(&qp->sq_lock, NULL);
    qp->rng = sib_rng_seed(qp->f->qpn);
    qp->ibqp.context = ibpd->context;
    qp->ibqp.qp_context = a->qp_context;
    qp->ibqp.pd = ibpd;
    qp->ibqp.send_cq = a->send_cq;
    qp->ibqp.recv_cq = a->recv_cq;
    qp->ibqp.srq = a->srq;
    qp->ibqp.handle = qp->slot;
    qp->ibqp.qp_num = qp->f->qpn;
    qp->ibqp.state = IBV_QPS_RESET;
    qp->ibqp.qp_type = a->qp_type;
    pthread_mutex_init(&qp->ibqp.mutex, NULL);
    pthread_cond_init(&qp->ibqp.cond, NULL);
    sib_obj_init(&qp->o, SIB_K_QP, qp);
    __atomic_fetch_add(&qp->pd->users, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&qp->scq->users, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&qp->rcq->users, 1, __ATOMIC_RELAXED);
    if (qp->srq) {
        __atomic_fetch_add(&qp->srq->users, 1, __ATOMIC_RELAXED);
        a->cap.max_recv_wr = a->cap.max_recv_sge = 0;
    }
    pthread_mutex_lock(&ctx->lock);
    qp->next = ctx->qps;
    ctx->qps = qp;
    pthread_mutex_unlock(&ctx->lock);
    if (a->qp_type == IBV_QPT_RC)
        SIB_COUNT(ctx->f, qp_created_rc, 1);
    else
        SIB_COUNT(ctx->f, qp_created_ud, 1);
    return &qp->ibqp;
}

void sib_qp_destroy_local(struct sib_qp *qp, void (*drop_sq)(struct sib_qp *qp))
{
    struct sib_context *ctx = qp->ctx;
    struct sib_qp **pp;
    bool mine = ctx->pid == getpid();

    pthread_mutex_lock(&ctx->lock);
    for (pp = &ctx->qps; *pp; pp = &(*pp)->next) {
        if (*pp == qp) {
            *pp = qp->next;
            break;
        }
    }
    pthread_mutex_unlock(&ctx->lock);

    pthread_mutex_lock(&qp->sq_lock);
    drop_sq(qp);
    pthread_mutex_unlock(&qp->sq_lock);
    if (mine) {
        struct sib_fqp *f = qp->f;

        sib_lock(&sib_fab.hdr->lock);
        sib_lock(&f->lock);
        if (f->qpn == qp->ibqp.qp_num) {
            __atomic_store_n(&f->qpn, 0, __ATOMIC_RELEASE);
            sib_rq_free(&f->rq);
        }
        sib_unlock(&f->lock);
        sib_unlock(&sib_fab.hdr->lock);
        if (qp->ibqp.qp_type == IBV_QPT_RC)
            SIB_COUNT(ctx->f, qp_destroyed_rc, 1);
        else
            SIB_COUNT(ctx->f, qp_destroyed_ud, 1);
    }
    __atomic_fetch_sub(&qp->pd->users, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&qp->scq->users, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&qp->rcq->users, 1, __ATOMIC_RELAXED);
    if (qp->srq)
        __atomic_fetch_sub(&qp->srq->users, 1, __ATOMIC_RELAXED);
    free(qp->sq);
    qp->sq = NULL;
    free(qp->batch);
    qp->batch = NULL;
    sib_obj_bury(ctx, &qp->o);
}

int sib_destroy_qp(struct ibv_qp *ibqp, void (*drop_sq)(struct sib_qp *qp))
{
    struct sib_qp *qp = sib_qp(ibqp);

    if (!qp)
        return sib_err(EINVAL);
    sib_cost(sib_knobs.cost_destroy_qp_us);
    sib_qp_destroy_local(qp, drop_sq);
    return 0;
}

/* ---- query ---- */

int sib_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
                 struct ibv_qp_init_attr *init)
{
    struct sib_qp *qp = sib_qp(ibqp);
    struct sib_fqp *f;

    (void)mask; /* everything is cheap to report */
    if (!qp || !attr || !init)
        return sib_err(EINVAL);
    f = qp->f;
    memset(attr, 0, sizeof(*attr));
    memset(init, 0, sizeof(*init));
    sib_lock(&f->lock);
    attr->qp_state = (enum ibv_qp_state)f->state;
    attr->cur_qp_state = attr->qp_state;
    attr->path_mtu = (enum ibv_mtu)f->path_mtu;
    attr->path_mig_state = IBV_MIG_MIGRATED;
    attr->qkey = f->qkey;
    attr->rq_psn = f->rq_psn;
    attr->sq_psn = f->sq_psn;
    attr->dest_qp_num = f->dest_qpn;
    attr->qp_access_flags = (int)f->access;
    attr->cap = f->cap;
    attr->ah_attr = f->ah;
    attr->pkey_index = f->pkey_index;
    attr->max_rd_atomic = f->max_rd_atomic;
    attr->max_dest_rd_atomic = f->max_dest_rd_atomic;
    attr->min_rnr_timer = f->min_rnr_timer;
    attr->port_num = f->port;
    attr->timeout = f->timeout;
    attr->retry_cnt = f->retry_cnt;
    attr->rnr_retry = f->rnr_retry;
    init->sq_sig_all = f->sq_sig_all;
    sib_unlock(&f->lock);
    init->qp_context = ibqp->qp_context;
    init->send_cq = ibqp->send_cq;
    init->recv_cq = ibqp->recv_cq;
    init->srq = ibqp->srq;
    init->cap = attr->cap;
    init->qp_type = ibqp->qp_type;
    return 0;
}

/* ---- modify: the state machine ---- */

#define M(x) IBV_QP_##x

/* Required and optional attributes of a transition; false if it is illegal. */
static bool transition(uint8_t type, int cur, int next, uint32_t *req, uint32_t *opt)
{
    bool rc = type == IBV_QPT_RC;

    *req = *opt = 0;
    if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
        return true;
    switch (cur * 8 + next) {
    case IBV_QPS_RESET * 8 + IBV_QPS_INIT:
        *req = M(PKEY_INDEX) | M(PORT) | (rc ? M(ACCESS_FLAGS) : M(QKEY));
        return true;
    case IBV_QPS_INIT * 8 + IBV_QPS_INIT:
        *opt = M(PKEY_INDEX) | M(PORT) | (rc ? M(ACCESS_FLAGS) : M(QKEY));
        return true;
    case IBV_QPS_INIT * 8 + IBV_QPS_RTR:
        if (rc) {
            *req = M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) |
                   M(MIN_RNR_TIMER);
            *opt = M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX);
        } else {
            *opt = M(PKEY_INDEX) | M(QKEY);
        }
        return true;
    case IBV_QPS_RTR * 8 + IBV_QPS_RTS:
        *req =
            M(SQ_PSN) | (rc ? M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC) : 0);
        *opt =
            M(CUR_STATE) |
            (rc ? M(ALT_PATH) | M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) : M(QKEY));
        return true;
    case IBV_QPS_RTS * 8 + IBV_QPS_RTS:
        *opt =
            M(CUR_STATE) |
            (rc ? M(ACCESS_FLAGS) | M(ALT_PATH) | M(PATH_MIG_STATE) | M(MIN_RNR_TIMER) : M(QKEY));
        return true;
    default:
        return false;
    }
}

static int check_values(const struct ibv_qp_attr *a, uint32_t mask)
{
    if ((mask & M(PORT)) && a->port_num != 1)
        return EINVAL;
    if ((mask & M(PKEY_INDEX)) && a->pkey_index != 0)
        return EINVAL;
    if ((mask & M(ACCESS_FLAGS)) && (a->qp_access_flags & ~QP_ACCESS))
        return EINVAL;
    if ((mask & M(PATH_MTU)) && !sib_mtu_bytes(a->path_mtu))
        return EINVAL;
    if ((mask & M(MAX_DEST_RD_ATOMIC)) && a->max_dest_rd_atomic > SIB_MAX_RD_ATOMIC)
        return EINVAL;
    if ((mask & M(MAX_QP_RD_ATOMIC)) && a->max_rd_atomic > SIB_MAX_RD_ATOMIC)
        return EINVAL;
    if (((mask & M(TIMEOUT)) && a->timeout > 31) || ((mask & M(RETRY_CNT)) && a->retry_cnt > 7) ||
        ((mask & M(RNR_RETRY)) && a->rnr_retry > 7) ||
        ((mask & M(MIN_RNR_TIMER)) && a->min_rnr_timer > 31))
        return EINVAL;
    if (((mask & M(DEST_QPN)) && a->dest_qp_num > 0xffffff) ||
        ((mask & M(RQ_PSN)) && a->rq_psn > 0xffffff) ||
        ((mask & M(SQ_PSN)) && a->sq_psn > 0xffffff))
        return EINVAL;
    if (mask & M(AV))
        return sib_check_ah_attr(&a->ah_attr);
    return 0;
}

static void apply(struct sib_fqp *f, const struct ibv_qp_attr *a, uint32_t mask)
{
    if (mask & M(PORT))
        f->port = a->port_num;
    if (mask & M(PKEY_INDEX))
        f->pkey_index = a->pkey_index;
    if (mask & M(ACCESS_FLAGS))
        f->access = (uint32_t)a->qp_access_flags;
    if (mask & M(QKEY))
        f->qkey = a->qkey;
    if (mask & M(AV))
        f->ah = a->ah_attr;
    if (mask & M(PATH_MTU))
        f->path_mtu = (uint8_t)a->path_mtu;
    if (mask & M(DEST_QPN))
        f->dest_qpn = a->dest_qp_num;
    if (mask & M(RQ_PSN))
        f->rq_psn = a->rq_psn;
    if (mask & M(SQ_PSN))
        f->sq_psn = a->sq_psn;
    if (mask & M(MAX_DEST_RD_ATOMIC))
        f->max_dest_rd_atomic = a->max_dest_rd_atomic;
    if (mask & M(MAX_QP_RD_ATOMIC))
        f->max_rd_atomic = a->max_rd_atomic;
    if (mask & M(MIN_RNR_TIMER))
        f->min_rnr_timer = a->min_rnr_timer;
    if (mask & M(TIMEOUT))
        f->timeout = a->timeout;
    if (mask & M(RETRY_CNT))
        f->retry_cnt = a->retry_cnt;
    if (mask & M(RNR_RETRY))
        f->rnr_retry = a->rnr_retry;
}

static uint32_t transition_cost_us(int cur, int next)
{
    if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
        return sib_knobs.cost_init_us;
    if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
        return sib_knobs.cost_rtr_us;
    if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
        return sib_knobs.cost_rts_us;
    return 0;
}

static int validate(const struct sib_fqp *f, const struct ibv_qp_attr *a, uint32_t mask, int *next)
{
    int cur = f->state;
    uint32_t req, opt;

    if ((mask & M(CUR_STATE)) && (int)a->cur_qp_state != cur)
        return EINVAL;
    *next = (mask & M(STATE)) ? (int)a->qp_state : cur;
    if (*next < IBV_QPS_RESET || *next > IBV_QPS_ERR)
        return EINVAL;
    if (!transition(f->type, cur, *next, &req, &opt))
        return EINVAL;
    if ((mask & req) != req || (mask & ~(req | opt | M(STATE))))
        return EINVAL;
    return check_values(a, mask);
}

int sib_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
                  void (*settle_sq)(struct sib_qp *qp, int next))
{
    struct sib_qp *qp = sib_qp(ibqp);
    uint32_t mask = (uint32_t)attr_mask;
    struct sib_fqp *f;
    int next, rc;

    if (!qp || !attr)
        return sib_err(EINVAL);
    f = qp->f;
    if (mask & M(STATE)) /* a firmware command: costs even when it fails */
        sib_cost(transition_cost_us(__atomic_load_n(&f->state, __ATOMIC_ACQUIRE), attr->qp_state));
    pthread_mutex_lock(&qp->sq_lock);
    sib_lock(&f->lock);
    rc = validate(f, attr, mask, &next);
    if (!rc) {
        apply(f, attr, mask);
        if (next == IBV_QPS_ERR) {
            sib_qp_to_err_locked(f);
        } else if (next == IBV_QPS_RESET) {
            f->rq.head = f->rq.tail;
            f->overrun_reported = 0;
            /* As rdma_rxe was seen to do when a datagram failed during the reset: the QP
             * reports RTS again, its receive side stays in error (odd resets here). */
            if (f->type == IBV_QPT_UD && sib_knobs.ud_deaf_reset)
                f->deaf = ++f->ud_resets & 1;
        }
        __atomic_store_n(&f->state, (uint8_t)next, __ATOMIC_RELEASE);
    }
    sib_unlock(&f->lock);
    if (!rc) {
        settle_sq(qp, next);
        ibqp->state = (enum ibv_qp_state)next;
        SIB_COUNT(qp->ctx->f, qp_modifies, 1);
    }
    pthread_mutex_unlock(&qp->sq_lock);
    return rc ? sib_err(rc) : 0;
}
