/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The execution engine: softib is the "NIC", and a send queue is executed
 * in the process that posted to it, in order. post_send runs it at once;
 * what cannot finish yet (RNR wait, retransmission timer, SOFTIB_DEFERRED,
 * wire delay) stays queued and is progressed from that process's
 * ibv_poll_cq and ibv_get_cq_event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "sib.h"

/* IB RNR NAK timer encoding (IBA table 45), in units of 10 us */
static const uint32_t rnr_10us[32] = {
    65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,    32,
    48,    64,   96,   128,  192,  256,   384,   512,   768,   1024,  1536,
    2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

uint32_t sib_npkts(uint64_t len, uint32_t mtu)
{
    return len <= mtu ? 1 : (uint32_t)((len + mtu - 1) / mtu);
}

static enum ibv_wc_opcode wc_opcode(uint32_t wr_opcode)
{
    switch (wr_opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
        return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
        return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return IBV_WC_FETCH_ADD;
    default:
        return IBV_WC_SEND;
    }
}

void sib_retire_send(uint32_t qp_slot, uint32_t qpn, uint64_t seq)
{
    struct sib_fqp *f = sib_fqp_at(&sib_fab, qp_slot);

    if (__atomic_load_n(&f->qpn, __ATOMIC_ACQUIRE) == qpn)
        __atomic_store_n(&f->sq_retired, seq + 1, __ATOMIC_RELEASE);
}

/* A CQ lost one of our completions: the QP is in error from now on. */
static void overrun_fail(struct sib_qp *qp)
{
    struct sib_fqp *f = qp->f;

    sib_qp_fail(qp);
    if (!__atomic_exchange_n(&f->overrun_reported, 1, __ATOMIC_ACQ_REL))
        sib_async_post(f->owner, IBV_EVENT_QP_FATAL, SIB_K_QP, qp->slot, f->qpn);
}

void sib_sq_complete(struct sib_qp *qp, struct sib_swqe *w, enum ibv_wc_status st)
{
    struct sib_fqp *f = qp->f;
    bool signaled = (w->flags & IBV_SEND_SIGNALED) || f->sq_sig_all || st != IBV_WC_SUCCESS;

    if (signaled) {
        struct sib_cqe e;

        sib_cqe_init(&e, w->wr_id, st, wc_opcode(w->opcode), f->qpn);
        e.wc.byte_len = st == IBV_WC_SUCCESS ? (uint32_t)w->len : 0;
        e.is_send = 1;
        e.qp_slot = qp->slot;
        e.seq = w->seq;
        if (!sib_cq_push(f->send_cq, &e, false))
            overrun_fail(qp);
    }
    if (st == IBV_WC_WR_FLUSH_ERR)
        SIB_COUNT(qp->ctx->f, wc_flushed, 1);
    else if (st != IBV_WC_SUCCESS)
        SIB_COUNT(qp->ctx->f, wc_errors, 1);
    /* Read without sq_lock by sib_progress's quick emptiness check: atomic. */
    __atomic_store_n(&qp->sq_head, qp->sq_head + 1, __ATOMIC_RELEASE);
    sib_ctx_pending_add(qp->ctx, -1);
}

enum sib_step sib_sq_fail(struct sib_qp *qp, struct sib_swqe *w, enum ibv_wc_status st)
{
    sib_sq_complete(qp, w, st);
    sib_qp_fail(qp); /* the rest of the queue is flushed by sib_sq_run */
    return SIB_STEP_DONE;
}

/* Nothing reached the responder: retransmit after the local ACK timeout,
 * retry_cnt times (timeout 0 means wait forever: keep retrying). */
enum sib_step sib_retry_lost(struct sib_qp *qp, struct sib_swqe *w)
{
    const struct sib_fqp *f = qp->f;
    uint64_t now = sib_now_ns();

    if (f->timeout && w->retries_left-- <= 0)
        return sib_sq_fail(qp, w, IBV_WC_RETRY_EXC_ERR);
    SIB_COUNT(qp->ctx->f, transport_retries, 1);
    w->not_before = now + (f->timeout ? 4096ull << f->timeout : 1000000ull);
    return SIB_STEP_WAIT;
}

/* The responder had no receive WQE: wait its min_rnr_timer, rnr_retry times
 * (7 = forever). */
enum sib_step sib_retry_rnr(struct sib_qp *qp, struct sib_swqe *w, uint8_t timer)
{
    if (w->rnr_left == 0)
        return sib_sq_fail(qp, w, IBV_WC_RNR_RETRY_EXC_ERR);
    if (qp->f->rnr_retry != 7)
        w->rnr_left--;
    SIB_COUNT(qp->ctx->f, rnr_retries, 1);
    w->not_before = sib_now_ns() + (uint64_t)rnr_10us[timer & 31] * 10000;
    return SIB_STEP_WAIT;
}

void sib_sq_start(struct sib_qp *qp, struct sib_swqe *w)
{
    w->started = true;
    w->retries_left = qp->f->retry_cnt;
    w->rnr_left = qp->f->rnr_retry;
}

/*
 * Runs the queue from its head, in order. An RC head that is an RDMA WRITE
 * or READ on its first attempt takes the ready WQEs of the same opcode
 * after it along as one batch (sib_rc_batch), as an HCA processes a
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
        if (!w->started) {
            if (qp->f->type == IBV_QPT_RC) {
                enum sib_batch_step b = sib_rc_batch(qp, &now);

                if (b == SIB_BATCH_DONE)
                    continue;
                if (b == SIB_BATCH_WAIT)
                    return w->not_before;
            }
            sib_sq_start(qp, w);
        }
        step = qp->f->type == IBV_QPT_UD ? sib_ud_exec(qp, w) : sib_rc_exec(qp, w);
        if (step == SIB_STEP_WAIT)
            return w->not_before;
    }
    if (qp->held) {
        sib_ud_flush_held(qp, false);
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
