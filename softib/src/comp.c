/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The completer: how a send WQE ends. Its completion on the send CQ (and
 * the QP's error when that CQ overran), failure, and the two retry timers
 * (a lost request retransmitted after the local ACK timeout, an RNR NAK
 * waited out). Called by the requester (req.c); calls only the objects
 * below it.
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
