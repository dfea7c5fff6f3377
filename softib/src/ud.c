/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unreliable datagrams. The send always completes successfully: whether
 * the datagram arrives (right QPN, address and Q_Key, a receive posted,
 * not dropped by SOFTIB_UD_LOSS) is only visible at the receiver, as on a
 * real fabric. The receiver's buffer starts with 40 bytes of GRH space,
 * written (and IBV_WC_GRH set) when the datagram carried a GRH: always on
 * RoCE, on InfiniBand when the address handle is global.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

static void drop_other(struct sib_qp *qp)
{
    SIB_COUNT(qp->ctx->f, ud_drops_other, 1);
}

static bool dest_accepts(const struct sib_qp *qp, const struct sib_dgram *d,
                         const struct sib_fqp *t)
{
    uint32_t qkey = (d->remote_qkey & 0x80000000u) ? qp->f->qkey : d->remote_qkey;

    return t->type == IBV_QPT_UD && (t->state == IBV_QPS_RTR || t->state == IBV_QPS_RTS) &&
           sib_av_reaches(&d->ah, t->owner) && qkey == t->qkey;
}

static void receiver_completion(struct sib_qp *qp, const struct sib_dgram *d, struct sib_fqp *t,
                                const struct sib_rwqe *r, uint32_t len, bool grh,
                                enum ibv_wc_status st)
{
    bool imm = d->opcode == IBV_WR_SEND_WITH_IMM;
    struct sib_fctx *owner = sib_fctx_at(&sib_fab, t->owner);
    struct sib_cqe e;

    sib_cqe_init(&e, r->wr_id, st, IBV_WC_RECV, t->qpn);
    if (st == IBV_WC_SUCCESS) {
        e.wc.byte_len = len + SIB_GRH_BYTES; /* the GRH space always counts */
        e.wc.src_qp = qp->f->qpn;
        e.wc.slid = sib_fab.hdr->roce ? 0 : qp->ctx->lid;
        e.wc.sl = d->ah.sl;
        e.wc.wc_flags = (grh ? IBV_WC_GRH : 0) | (imm ? IBV_WC_WITH_IMM : 0);
        e.wc.imm_data = imm ? d->imm : 0;
        SIB_COUNT(owner, ud_recvs, 1);
        SIB_COUNT(owner, recvs, 1);
        SIB_COUNT(owner, recv_bytes, len);
    } else {
        SIB_COUNT(owner, wc_errors, 1);
    }
    if (!sib_cq_push(t->recv_cq, &e, (d->flags & IBV_SEND_SOLICITED) != 0)) {
        sib_qp_to_err_locked(t);
        if (!__atomic_exchange_n(&t->overrun_reported, 1, __ATOMIC_ACQ_REL))
            sib_async_post(t->owner, IBV_EVENT_QP_FATAL, SIB_K_QP, t->qpn & (SIB_MAX_QP - 1),
                           t->qpn);
    }
}

/* Scatter [GRH][payload] into the receive WQE; returns the completion
 * status, or *gone when the receiver's process is not there any more. */
static enum ibv_wc_status scatter(struct sib_qp *qp, const struct sib_dgram *d, struct sib_fqp *t,
                                  uint64_t pd, const struct sib_rwqe *r, const struct iovec *liov,
                                  int nl, uint32_t len, bool grh, bool *gone)
{
    struct iovec riov[SIB_MAX_SGE], src[SIB_MAX_SGE + 1], *rp = riov;
    struct sib_peer to = sib_qp_peer(t);
    struct ibv_grh hdr;
    enum ibv_wc_status st;
    int nr = 0, ns = 0, rc;
    uint64_t skip = SIB_GRH_BYTES;

    *gone = false;
    st = sib_recv_iov(pd, r, (uint64_t)len + SIB_GRH_BYTES, riov, &nr);
    if (st != IBV_WC_SUCCESS)
        return st;
    if (grh) {
        sib_grh_build(&hdr, &d->ah, qp->ctx->lid, len);
        src[ns].iov_base = &hdr;
        src[ns++].iov_len = sizeof(hdr);
    } else {
        /* no GRH on the wire: those 40 bytes are left as they were */
        while (skip && nr) {
            uint64_t n = rp->iov_len < skip ? rp->iov_len : skip;

            rp->iov_base = (char *)rp->iov_base + n;
            rp->iov_len -= n;
            skip -= n;
            if (!rp->iov_len) {
                rp++;
                nr--;
            }
        }
    }
    memcpy(&src[ns], liov, (size_t)nl * sizeof(*liov));
    ns += nl;
    rc = sib_xfer(&to, true, src, ns, rp, nr);
    *gone = rc == ESRCH;
    return rc ? IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS;
}

static void deliver(struct sib_qp *qp, const struct sib_dgram *d, const struct iovec *liov, int nl,
                    uint32_t len)
{
    bool grh = sib_fab.hdr->roce || d->ah.is_global, gone;
    struct sib_fqp *t = sib_qp_lookup_lock(d->remote_qpn);
    enum ibv_wc_status st;
    struct sib_rwqe_taken r;
    uint64_t pd = 0;

    if (!t) {
        drop_other(qp);
        return;
    }
    if (!dest_accepts(qp, d, t)) {
        sib_qp_unlock(t);
        drop_other(qp);
        return;
    }
    if (!sib_dest_take(t, &r, &pd)) {
        SIB_COUNT(sib_fctx_at(&sib_fab, t->owner), ud_drops_nobuf, 1);
    } else {
        st = scatter(qp, d, t, pd, sib_taken_rwqe(&r), liov, nl, len, grh, &gone);
        if (gone) {
            /* a dead receiver's QP: the datagram goes nowhere */
            sib_qp_unlock(t);
            drop_other(qp);
            return;
        }
        receiver_completion(qp, d, t, sib_taken_rwqe(&r), len, grh, st);
    }
    sib_qp_unlock(t);
}

void sib_ud_flush_held(struct sib_qp *qp, bool force)
{
    struct sib_held *h = qp->held;
    struct iovec iov;

    if (!h || (!force && sib_now_ns() - h->since < 1000000))
        return;
    __atomic_store_n(&qp->held, NULL, __ATOMIC_RELEASE);
    iov.iov_base = h->data;
    iov.iov_len = h->len;
    deliver(qp, &h->d, &iov, 1, h->len);
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

enum sib_step sib_ud_exec(struct sib_qp *qp, struct sib_swqe *w)
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
        deliver(qp, &w->ud, liov, nl, (uint32_t)w->len);
        sib_ud_flush_held(qp, true); /* a held datagram goes after this one */
    }
    sib_sq_complete(qp, w, IBV_WC_SUCCESS);
    return SIB_STEP_DONE;
}
