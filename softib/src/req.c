/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester: softib is the "NIC", and a send queue is executed in the
 * process that posted to it, in order. post_send runs it at once; what
 * cannot finish yet (RNR wait, retransmission timer, SOFTIB_DEFERRED, wire
 * delay) stays queued and is progressed from that process's ibv_poll_cq and
 * ibv_get_cq_event (sib_progress, called by verbs.c).
 *
 * Each WQE is carried to the responder (resp.c), and ends in the completer
 * (comp.c): completed, failed or waiting for a retry. A run of ready RDMA
 * WRITEs or READs at the head of an RC queue goes as one batch. UD
 * datagrams may be dropped (SOFTIB_UD_LOSS), held back behind the next
 * one (SOFTIB_UD_REORDER) or delivered twice, the copy after the next one
 * (SOFTIB_UD_DUP); the send always completes successfully. Faults as on
 * hardware: a port down (SOFTIB_PORT_DOWN) holds back whatever would cross
 * it, and a path may break (SOFTIB_RC_BREAK).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

_Static_assert(SIB_BATCH_IOV <= IOV_MAX, "a batch's iovecs must fit one process_vm_writev");
_Static_assert(SIB_BATCH_IOV >= SIB_MAX_SGE, "a batch takes any one WQE");

void sib_sq_start(struct sib_qp *qp, struct sib_swqe *w)
{
    w->started = true;
    w->retries_left = qp->f->retry_cnt;
    w->rnr_left = qp->f->rnr_retry;
}

/* ---- RC ---- */

static enum sib_step rc_exec(struct sib_qp *qp, struct sib_swqe *w)
{
    struct sib_rc_op op = {.qp = qp, .w = w};
    bool local_write = w->opcode == IBV_WR_RDMA_READ || w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
                       w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
    enum ibv_wc_status st;
    uint64_t total;

    if (w->inline_len) {
        op.liov[0].iov_base = sib_swqe_inline(qp, w);
        op.liov[0].iov_len = w->inline_len;
        op.nl = 1;
    } else {
        st = sib_local_iov(qp, w->sge, w->num_sge, local_write ? IBV_ACCESS_LOCAL_WRITE : 0,
                           op.liov, &op.nl, &total);
        if (st != IBV_WC_SUCCESS)
            return sib_sq_fail(qp, w, st);
    }
    switch (sib_resp_rc(&op)) {
    case SIB_RC_OK:
        sib_sq_complete(qp, w, IBV_WC_SUCCESS);
        return SIB_STEP_DONE;
    case SIB_RC_LOST:
        return sib_retry_lost(qp, w);
    case SIB_RC_RNR:
        return sib_retry_rnr(qp, w, op.rnr_timer);
    default:
        return sib_sq_fail(qp, w, op.status);
    }
}

/* Local side of the batch: the head and the ready WQEs of its opcode after
 * it whose SGEs pass the checks, within the limits. Returns how many. */
static int batch_local(struct sib_qp *qp, struct sib_batch *b, uint64_t *now, int *nl)
{
    struct sib_swqe *head = sib_sq_entry(qp, qp->sq_head);
    uint32_t need = head->opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE : 0;
    uint64_t avail = qp->sq_tail - qp->sq_head, bytes = 0, total;
    int n;

    *nl = 0;
    for (n = 0; n < SIB_BATCH_WQES && (uint64_t)n < avail; n++) {
        struct sib_swqe *w = sib_sq_entry(qp, qp->sq_head + (uint64_t)n);
        int k = 0;

        if (n) { /* the engine checked the head */
            if (w->opcode != head->opcode || w->started || bytes + w->len > SIB_BATCH_BYTES)
                break;
            if (w->not_before) { /* the wire model: not on the wire yet */
                if (!*now)
                    *now = sib_now_ns();
                if (w->not_before > *now)
                    break;
            }
        }
        if (w->inline_len) {
            if (*nl + 1 > SIB_BATCH_IOV)
                break;
            b->liov[*nl].iov_base = sib_swqe_inline(qp, w);
            b->liov[*nl].iov_len = w->inline_len;
            k = 1;
        } else {
            if (*nl + (int)w->num_sge > SIB_BATCH_IOV ||
                sib_local_iov(qp, w->sge, w->num_sge, need, b->liov + *nl, &k, &total) !=
                    IBV_WC_SUCCESS)
                break; /* it fails alone, after the batch */
        }
        b->nliov[n] = k;
        *nl += k;
        bytes += w->len;
    }
    return n;
}

/*
 * The head WQE (ready, first attempt) and the ready RDMA WRITEs (READs)
 * after it go as one batch, as an HCA processes a doorbell's WQEs back to
 * back: each WQE's local SGEs checked as alone here, the responder's checks
 * and one process_vm_writev/readv for all of them in resp.c, then per-WQE
 * counters and the completions in order. A WQE that would fail (or that
 * does not fit) ends the batch before it and later runs alone, with the
 * usual error semantics; so does everything when the head would fail.
 * *now: 0 or the current time (set when read).
 */
static enum sib_batch_step rc_batch(struct sib_qp *qp, uint64_t *now)
{
    struct sib_swqe *head = sib_sq_entry(qp, qp->sq_head);
    bool write = head->opcode == IBV_WR_RDMA_WRITE;
    struct sib_fqp *me = qp->f;
    uint64_t ok_bytes = 0;
    uint32_t ok = 0;
    struct sib_batch *b;
    int n, i, nl;

    if (head->opcode != IBV_WR_RDMA_WRITE && head->opcode != IBV_WR_RDMA_READ)
        return SIB_BATCH_NONE;
    if (!qp->batch && !(qp->batch = malloc(sizeof(*qp->batch))))
        return SIB_BATCH_NONE;
    b = qp->batch;
    n = batch_local(qp, b, now, &nl);
    if (!n)
        return SIB_BATCH_NONE;
    n = sib_resp_rc_batch(qp, b, n, write);
    if (!n)
        return SIB_BATCH_NONE;
    if (n < 0) {
        /* the responder's process is gone: nothing arrived, retransmit */
        sib_sq_start(qp, head);
        return sib_retry_lost(qp, head) == SIB_STEP_WAIT ? SIB_BATCH_WAIT : SIB_BATCH_DONE;
    }

    for (i = 0; i < n; i++) {
        struct sib_swqe *w = sib_sq_entry(qp, qp->sq_head);

        /* our QP went to ERR meanwhile (a lost completion, a NAK to our
         * peer): the engine flushes the rest, as between single WQEs */
        if (i && __atomic_load_n(&me->state, __ATOMIC_ACQUIRE) == IBV_QPS_ERR)
            break;
        ok++;
        ok_bytes += w->len;
        sib_sq_complete(qp, w, IBV_WC_SUCCESS);
    }
    if (write) {
        SIB_COUNT(qp->ctx->f, rdma_writes, ok);
        SIB_COUNT(qp->ctx->f, rdma_write_bytes, ok_bytes);
    } else {
        SIB_COUNT(qp->ctx->f, rdma_reads, ok);
        SIB_COUNT(qp->ctx->f, rdma_read_bytes, ok_bytes);
    }
    return SIB_BATCH_DONE;
}

/* ---- UD ---- */

/* Deliver the held datagram: when forced, or when it has waited 1 ms. */
static void ud_flush_held(struct sib_qp *qp, bool force)
{
    struct sib_held *h = qp->held;
    struct iovec iov;

    if (!h || (!force && sib_now_ns() - h->since < 1000000))
        return;
    __atomic_store_n(&qp->held, NULL, __ATOMIC_RELEASE);
    iov.iov_base = h->data;
    iov.iov_len = h->len;
    sib_resp_ud(qp, &h->d, &iov, 1, h->len);
    free(h->data);
    free(h);
    sib_ctx_pending_add(qp->ctx, -1);
}

/* Keep a copy to deliver after the next datagram (or after 1 ms). */
static bool hold(struct sib_qp *qp, const struct sib_swqe *w, const struct iovec *liov, int nl)
{
    struct sib_held *h = calloc(1, sizeof(*h));
    uint8_t *p = h ? malloc(w->len ? w->len : 1) : NULL;
    uint64_t off = 0;

    if (!p) {
        free(h);
        return false;
    }
    for (int i = 0; i < nl; i++) {
        memcpy(p + off, liov[i].iov_base, liov[i].iov_len);
        off += liov[i].iov_len;
    }
    h->d = w->ud;
    h->data = p;
    h->len = (uint32_t)w->len;
    h->since = sib_now_ns();
    __atomic_store_n(&qp->held, h, __ATOMIC_RELEASE);
    sib_ctx_pending_add(qp->ctx, 1);
    return true;
}

/* SOFTIB_UD_SEND_STALL: as a device whose UD send queue hangs while the QP reports RTS
 * (nothing but a reset, which the consumer must decide on, brings it back). */
static bool ud_stalled(struct sib_qp *qp)
{
    if (qp->f->type != IBV_QPT_UD || !sib_knobs.ud_send_stall || qp->ud_was_reset)
        return false;
    if (qp->ud_sends_started < sib_knobs.ud_send_stall) {
        qp->ud_sends_started++;
        return false;
    }
    return true;
}

static enum sib_step ud_exec(struct sib_qp *qp, struct sib_swqe *w)
{
    struct iovec liov[SIB_MAX_SGE];
    enum ibv_wc_status st;
    uint64_t total;
    int nl = 1;

    if (w->inline_len) {
        liov[0].iov_base = sib_swqe_inline(qp, w);
        liov[0].iov_len = w->inline_len;
    } else {
        st = sib_local_iov(qp, w->sge, w->num_sge, 0, liov, &nl, &total);
        if (st != IBV_WC_SUCCESS)
            return sib_sq_fail(qp, w, st);
    }
    SIB_COUNT(qp->ctx->f, ud_sends, 1);
    SIB_COUNT(qp->ctx->f, sends, 1);
    SIB_COUNT(qp->ctx->f, send_bytes, w->len);
    if (sib_knobs.ud_loss > 0 && sib_rng01(&qp->rng) < sib_knobs.ud_loss) {
        SIB_COUNT(qp->ctx->f, ud_drops_injected, 1);
    } else if (sib_knobs.ud_reorder > 0 && !qp->held &&
               sib_rng01(&qp->rng) < sib_knobs.ud_reorder && hold(qp, w, liov, nl)) {
        SIB_COUNT(qp->ctx->f, ud_reordered, 1);
    } else {
        sib_resp_ud(qp, &w->ud, liov, nl, (uint32_t)w->len);
        ud_flush_held(qp, true); /* a held datagram goes after this one */
        /* A duplicate arrives later than its original: after the next datagram (or 1 ms). */
        if (sib_knobs.ud_dup > 0 && sib_rng01(&qp->rng) < sib_knobs.ud_dup && hold(qp, w, liov, nl))
            SIB_COUNT(qp->ctx->f, ud_duplicated, 1);
    }
    sib_sq_complete(qp, w, IBV_WC_SUCCESS);
    return SIB_STEP_DONE;
}

/* ---- faults: a port down, a broken path ---- */

/* The context that owns QP number qpn, or NULL. */
static const struct sib_fctx *owner_of(uint32_t qpn)
{
    const struct sib_fqp *d = sib_fqp_at(&sib_fab, qpn & (SIB_MAX_QP - 1));
    uint32_t owner = __atomic_load_n(&d->owner, __ATOMIC_ACQUIRE);

    if (__atomic_load_n(&d->qpn, __ATOMIC_ACQUIRE) != qpn || owner >= SIB_MAX_CTX)
        return NULL;
    return sib_fctx_at(&sib_fab, owner);
}

/* SOFTIB_PORT_DOWN: whether w cannot pass now, this end's port or its destination's down. */
static bool link_cut(struct sib_qp *qp, const struct sib_swqe *w)
{
    const struct sib_fctx *dest;
    uint64_t now;

    if (!__atomic_load_n(&sib_fab.hdr->ports_go_down, __ATOMIC_ACQUIRE))
        return false;
    now = sib_now_ns();
    if (sib_port_down(qp->ctx->f, now))
        return true;
    dest = owner_of(qp->f->type == IBV_QPT_UD ? w->ud.remote_qpn : qp->f->dest_qpn);
    return dest && sib_port_down(dest, now);
}

/*
 * w meets a fault: a link down (an RC request is retransmitted until its QP's timeout and
 * retry count run out, then fails with RETRY_EXC, as on hardware; a datagram is lost) or,
 * by SOFTIB_RC_BREAK, a path that broke (the request fails with RETRY_EXC at once and its QP
 * goes to ERR). Returns false when w meets none.
 */
static bool faulted(struct sib_qp *qp, struct sib_swqe *w, enum sib_step *step)
{
    bool rc = qp->f->type == IBV_QPT_RC;

    if (link_cut(qp, w)) {
        if (!w->started)
            sib_sq_start(qp, w);
        if (rc) {
            *step = sib_retry_lost(qp, w);
        } else {
            SIB_COUNT(qp->ctx->f, link_down_drops, 1);
            sib_sq_complete(qp, w, IBV_WC_SUCCESS);
            *step = SIB_STEP_DONE;
        }
        return true;
    }
    if (rc && !w->started && sib_knobs.rc_break > 0 && sib_rng01(&qp->rng) < sib_knobs.rc_break) {
        sib_sq_start(qp, w);
        SIB_COUNT(qp->ctx->f, rc_breaks, 1);
        *step = sib_sq_fail(qp, w, IBV_WC_RETRY_EXC_ERR);
        return true;
    }
    return false;
}

/* ---- the queue ---- */

/*
 * Runs the queue from its head, in order. An RC head that is an RDMA WRITE
 * or READ on its first attempt takes the ready WQEs of the same opcode
 * after it along as one batch (rc_batch), as an HCA processes a
 * doorbell's WQEs back to back; anything the batch leaves out runs alone.
 */
uint64_t sib_sq_run(struct sib_qp *qp)
{
    uint64_t now = 0;

    while (qp->sq_head != qp->sq_tail) {
        struct sib_swqe *w = sib_sq_entry(qp, qp->sq_head);
        uint8_t state = __atomic_load_n(&qp->f->state, __ATOMIC_ACQUIRE);
        enum sib_step step;

        if (state == IBV_QPS_ERR) {
            sib_sq_complete(qp, w, IBV_WC_WR_FLUSH_ERR);
            continue;
        }
        if (state != IBV_QPS_RTS)
            return 0;
        if (w->not_before) {
            if (!now)
                now = sib_now_ns();
            if (w->not_before > now)
                return w->not_before;
        }
        if (faulted(qp, w, &step)) {
            if (step == SIB_STEP_WAIT)
                return w->not_before;
            continue;
        }
        if (!w->started && ud_stalled(qp))
            return 0; /* stays posted, uncompleted, until a reset drops it */
        if (!w->started) {
            if (qp->f->type == IBV_QPT_RC) {
                enum sib_batch_step b = rc_batch(qp, &now);

                if (b == SIB_BATCH_DONE)
                    continue;
                if (b == SIB_BATCH_WAIT)
                    return w->not_before;
            }
            sib_sq_start(qp, w);
        }
        step = qp->f->type == IBV_QPT_UD ? ud_exec(qp, w) : rc_exec(qp, w);
        if (step == SIB_STEP_WAIT)
            return w->not_before;
    }
    if (qp->held) {
        ud_flush_held(qp, false);
        if (qp->held)
            return qp->held->since + 1000000;
    }
    return 0;
}

uint64_t sib_progress(struct sib_context *ctx)
{
    uint64_t earliest = 0;
    struct sib_qp *qp;

    if (!__atomic_load_n(&ctx->pending, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&ctx->lock);
    for (qp = ctx->qps; qp; qp = qp->next) {
        uint64_t due;

        /* A hint only (the queue's lock is not held): a stale answer is fixed next round. */
        if (__atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE) ==
                __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) &&
            !__atomic_load_n(&qp->held, __ATOMIC_ACQUIRE))
            continue;
        /* another thread is running this queue: it makes the progress */
        if (pthread_mutex_trylock(&qp->sq_lock)) {
            due = sib_now_ns() + 1000000;
        } else {
            due = sib_sq_run(qp);
            pthread_mutex_unlock(&qp->sq_lock);
        }
        if (due && (!earliest || due < earliest))
            earliest = due;
    }
    pthread_mutex_unlock(&ctx->lock);
    return earliest;
}

/* Destroy, or back to RESET: the pending WQEs are dropped without completions. */
void sib_sq_drop(struct sib_qp *qp)
{
    uint64_t n = qp->sq_tail - qp->sq_head;

    __atomic_store_n(&qp->sq_head, qp->sq_tail, __ATOMIC_RELEASE);
    if (n)
        sib_ctx_pending_add(qp->ctx, -(int)n);
    ud_flush_held(qp, true); /* already on the wire: it still arrives */
}

/* After the fabric side changed state: what the local send queue must do. */
void sib_sq_settle(struct sib_qp *qp, int next)
{
    if (next == IBV_QPS_ERR) {
        sib_sq_run(qp); /* flushes every pending WQE */
    } else if (next == IBV_QPS_RESET) {
        sib_sq_drop(qp);
        qp->ud_was_reset = true;
        __atomic_store_n(&qp->f->sq_retired, qp->sq_tail, __ATOMIC_RELEASE);
    }
}
