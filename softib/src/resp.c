/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder: what a request does at the destination QP. The requester's
 * process (req.c) runs it under the responder QP's lock, as there is no
 * other process to run it: it checks that a packet would be accepted (QP
 * exists, connected back to us, address, state, PSN), then the operation's
 * rules (QP access flags, rkey, receive WQE), moves the bytes and writes the
 * responder's completion. Anything a real responder would silently drop is
 * "lost" and retransmitted; anything it would NAK fails both QPs the way rxe
 * does.
 *
 * UD: whether the datagram arrives (right QPN, address and Q_Key, a receive
 * posted) is only visible here, at the receiver. The receiver's buffer
 * starts with 40 bytes of GRH space, written (and IBV_WC_GRH set) when the
 * datagram carried a GRH: always on RoCE, on InfiniBand when the address
 * handle is global.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "sib.h"

static uint32_t npkts(uint64_t len, uint32_t mtu)
{
    return len <= mtu ? 1 : (uint32_t)((len + mtu - 1) / mtu);
}

/* ---- RC ---- */

/* The responder rejects the request and goes to the error state with us. */
/* The responder's affiliated event for a request it refused, as an HCA raises it: an access
 * violation, an invalid request, or (an operation it could not carry out) a fatal one. */
static enum ibv_event_type nak_event(enum ibv_wc_status st)
{
    switch (st) {
    case IBV_WC_REM_ACCESS_ERR:
        return IBV_EVENT_QP_ACCESS_ERR;
    case IBV_WC_REM_INV_REQ_ERR:
        return IBV_EVENT_QP_REQ_ERR;
    default:
        return IBV_EVENT_QP_FATAL;
    }
}

static enum sib_rc_verdict nak(struct sib_rc_op *op, enum ibv_wc_status st)
{
    struct sib_fqp *d = op->dest;

    /* The error's own event first, then (SRQ) the last-WQE one of entering ERR. */
    sib_async_post(d->owner, nak_event(st), SIB_K_QP, d->qpn & (SIB_MAX_QP - 1), d->qpn);
    sib_qp_to_err_locked(d);
    op->status = st;
    return SIB_RC_NAK;
}

static void responder_completion(struct sib_rc_op *op, const struct sib_rwqe *r,
                                 enum ibv_wc_opcode opcode, enum ibv_wc_status st)
{
    struct sib_fqp *d = op->dest;
    bool imm = op->w->opcode == IBV_WR_SEND_WITH_IMM || op->w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    struct sib_cqe e;

    sib_cqe_init(&e, r->wr_id, st, opcode, d->qpn);
    if (st == IBV_WC_SUCCESS) {
        e.wc.byte_len = (uint32_t)op->w->len;
        e.wc.src_qp = op->qp->f->qpn;
        e.wc.slid = sib_fab.hdr->roce ? 0 : op->qp->ctx->lid;
        e.wc.wc_flags = (imm ? IBV_WC_WITH_IMM : 0) | (sib_fab.hdr->roce ? IBV_WC_GRH : 0);
        e.wc.imm_data = imm ? op->w->imm : 0;
        SIB_COUNT(sib_fctx_at(&sib_fab, d->owner), recvs, 1);
        SIB_COUNT(sib_fctx_at(&sib_fab, d->owner), recv_bytes, op->w->len);
    } else {
        SIB_COUNT(sib_fctx_at(&sib_fab, d->owner), wc_errors, 1);
    }
    if (!sib_cq_push(d->recv_cq, &e, (op->w->flags & IBV_SEND_SOLICITED) != 0)) {
        sib_qp_to_err_locked(d);
        if (!__atomic_exchange_n(&d->overrun_reported, 1, __ATOMIC_ACQ_REL))
            sib_async_post(d->owner, IBV_EVENT_QP_FATAL, SIB_K_QP, d->qpn & (SIB_MAX_QP - 1),
                           d->qpn);
    }
}

static enum sib_rc_verdict do_send(struct sib_rc_op *op)
{
    struct sib_fqp *d = op->dest;
    struct sib_peer to = sib_qp_peer(d);
    struct iovec riov[SIB_MAX_SGE];
    struct sib_rwqe_taken r;
    enum ibv_wc_status st;
    uint64_t pd;
    int nr = 0, rc;

    if (!sib_dest_take(d, &r, &pd))
        return SIB_RC_RNR;
    st = sib_recv_iov(pd, sib_taken_rwqe(&r), op->w->len, riov, &nr);
    if (st == IBV_WC_SUCCESS) {
        rc = sib_xfer(&to, true, op->liov, op->nl, riov, nr);
        if (rc == ESRCH)
            return SIB_RC_LOST; /* the responder's process is gone, and its WQE with it */
        st = rc ? IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS;
    }
    responder_completion(op, sib_taken_rwqe(&r), IBV_WC_RECV, st);
    if (st == IBV_WC_LOC_LEN_ERR)
        return nak(op, IBV_WC_REM_INV_REQ_ERR);
    if (st != IBV_WC_SUCCESS)
        return nak(op, IBV_WC_REM_OP_ERR);
    SIB_COUNT(op->qp->ctx->f, sends, 1);
    SIB_COUNT(op->qp->ctx->f, send_bytes, op->w->len);
    return SIB_RC_OK;
}

/* rkey check of an RDMA/atomic request to d; *va is the target address. */
static bool rkey_check(const struct sib_fqp *d, uint32_t rkey, uint64_t raddr, uint64_t len,
                       uint32_t need, struct sib_fmr *mr, uint64_t *va)
{
    return sib_mr_lookup(rkey, true, mr) && mr->pd == d->pd &&
           sib_mr_range(mr, raddr, len, need, va);
}

static bool rkey_ok(struct sib_rc_op *op, uint64_t len, uint32_t need, struct sib_fmr *mr,
                    uint64_t *va)
{
    return rkey_check(op->dest, op->w->rkey, op->w->raddr, len, need, mr, va);
}

static enum sib_rc_verdict do_rdma(struct sib_rc_op *op, bool write)
{
    struct sib_fqp *d = op->dest;
    uint32_t need = write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
    bool imm = op->w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    struct sib_rwqe_taken r;
    struct sib_fmr mr;
    struct sib_peer to;
    struct iovec riov;
    uint64_t va = 0, pd;
    int rc = 0;

    if (!(d->access & need))
        return nak(op, IBV_WC_REM_INV_REQ_ERR);
    /* a zero-length RDMA carries no address to check */
    if (op->w->len && !rkey_ok(op, op->w->len, need, &mr, &va))
        return nak(op, IBV_WC_REM_ACCESS_ERR);
    if (!op->w->len) {
        /* Nothing to move, but a responder that is gone still does not answer (a zero-length
         * read is how a runtime asks whether a peer is there). */
        struct sib_peer owner = sib_qp_peer(d);
        if (sib_peer_gone(&owner)) /* the pidfd a copy checks: no read of /proc per request */
            return SIB_RC_LOST;
    }
    if (op->w->len) {
        riov.iov_base = (void *)(uintptr_t)va;
        riov.iov_len = op->w->len;
        to = sib_mr_peer(&mr);
        rc = sib_xfer(&to, write, op->liov, op->nl, &riov, 1);
    }
    if (rc == ESRCH)
        return SIB_RC_LOST;
    if (rc)
        return nak(op, IBV_WC_REM_ACCESS_ERR); /* a receive WQE is flushed by nak */
    /* The immediate's receive WQE is taken once the data is in place: without one the
     * request is NAKed RNR and retried, writing the same bytes again. */
    if (imm) {
        if (!sib_dest_take(d, &r, &pd))
            return SIB_RC_RNR;
        responder_completion(op, sib_taken_rwqe(&r), IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS);
    }
    if (write) {
        SIB_COUNT(op->qp->ctx->f, rdma_writes, 1);
        SIB_COUNT(op->qp->ctx->f, rdma_write_bytes, op->w->len);
    } else {
        SIB_COUNT(op->qp->ctx->f, rdma_reads, 1);
        SIB_COUNT(op->qp->ctx->f, rdma_read_bytes, op->w->len);
    }
    return SIB_RC_OK;
}

static enum sib_rc_verdict do_atomic(struct sib_rc_op *op)
{
    struct sib_fmr mr;
    struct sib_peer to;
    uint64_t va, orig;
    int rc;

    if (!(op->dest->access & IBV_ACCESS_REMOTE_ATOMIC))
        return nak(op, IBV_WC_REM_INV_REQ_ERR);
    if (!rkey_ok(op, 8, IBV_ACCESS_REMOTE_ATOMIC, &mr, &va))
        return nak(op, IBV_WC_REM_ACCESS_ERR);
    to = sib_mr_peer(&mr);
    rc = sib_atomic(&to, va, op->w->opcode, op->w->compare_add, op->w->swap, &orig);
    if (rc == ESRCH)
        return SIB_RC_LOST;
    if (rc)
        return nak(op, IBV_WC_REM_ACCESS_ERR);
    memcpy(op->liov[0].iov_base, &orig, sizeof(orig)); /* our own buffer */
    SIB_COUNT(op->qp->ctx->f, atomics, 1);
    return SIB_RC_OK;
}

/* Would the responder accept a packet from us at all? */
static bool accepted(const struct sib_fqp *me, const struct sib_fqp *d)
{
    return d->type == IBV_QPT_RC && d->dest_qpn == me->qpn && sib_av_reaches(&me->ah, d->owner) &&
           (d->state == IBV_QPS_RTR || d->state == IBV_QPS_RTS) && d->rq_psn == me->sq_psn;
}

enum sib_rc_verdict sib_resp_rc(struct sib_rc_op *op)
{
    struct sib_fqp *me = op->qp->f;
    enum sib_rc_verdict v;
    uint32_t n;

    op->dest = sib_qp_lookup_lock(me->dest_qpn);
    if (!op->dest)
        return SIB_RC_LOST;
    if (!accepted(me, op->dest)) {
        sib_qp_unlock(op->dest);
        return SIB_RC_LOST;
    }
    switch (op->w->opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
        v = do_send(op);
        break;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        v = do_rdma(op, true);
        break;
    case IBV_WR_RDMA_READ:
        v = do_rdma(op, false);
        break;
    default:
        v = do_atomic(op);
        break;
    }
    if (v == SIB_RC_OK) {
        /* both ends consumed the same number of PSNs */
        n = npkts(op->w->len, sib_mtu_bytes(me->path_mtu));
        op->dest->rq_psn = (op->dest->rq_psn + n) & 0xffffff;
        me->sq_psn = (me->sq_psn + n) & 0xffffff;
    }
    if (v == SIB_RC_RNR) {
        const struct sib_fctx *owner = sib_fctx_at(&sib_fab, op->dest->owner);

        /* a dead process's QP is gone, not merely short of receives */
        if (!sib_pid_alive(owner->pid, owner->start_time))
            v = SIB_RC_LOST;
        op->rnr_timer = op->dest->min_rnr_timer;
    }
    sib_qp_unlock(op->dest);
    return v;
}

/* ---- RC batches of RDMA WRITEs / READs ---- */

/*
 * The responder's side of a batch (req.c): the n ready RDMA WRITEs (READs)
 * at the head of qp's send queue, their local iovecs in b. One lookup and
 * lock of the responder QP, one accepted() and QP-access check, each WQE's
 * rkey checked as alone, then one process_vm_writev/readv for all of them
 * and the PSNs. A WQE that would fail ends the batch before it (it later
 * runs alone). Returns how many WQEs moved (0: none, the head runs alone),
 * or -1 when the responder's process is gone (nothing arrived: retransmit).
 */
int sib_resp_rc_batch(struct sib_qp *qp, struct sib_batch *b, int n, bool write)
{
    uint32_t need = write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
    struct sib_fqp *me = qp->f, *d;
    uint64_t bytes = 0, moved = 0, pkts = 0;
    uint32_t mtu;
    struct sib_fmr mr;
    struct sib_peer to = {0};
    bool have_peer = false;
    int i, nl_used = 0, nr = 0, rc = 0;

    d = sib_qp_lookup_lock(me->dest_qpn);
    if (!d)
        return 0;
    if (!accepted(me, d) || !(d->access & need)) {
        sib_qp_unlock(d);
        return 0;
    }
    for (i = 0; i < n; i++) {
        struct sib_swqe *w = sib_sq_entry(qp, qp->sq_head + (uint64_t)i);
        uint64_t va;

        /* a zero-length RDMA carries no address to check, and runs alone: it asks whether the
         * responder is there at all (do_rdma) */
        if (!w->len)
            break;
        {
            if (!rkey_check(d, w->rkey, w->raddr, w->len, need, &mr, &va) ||
                (have_peer &&
                 (mr.owner != to.slot || mr.pid != to.pid || mr.start_time != to.start_time)))
                break;
            to = sib_mr_peer(&mr);
            have_peer = true;
            b->riov[nr].iov_base = (void *)(uintptr_t)va;
            b->riov[nr].iov_len = w->len;
            nr++;
        }
        nl_used += b->nliov[i];
        bytes += w->len;
    }
    n = i;
    if (!n) {
        sib_qp_unlock(d);
        return 0;
    }
    moved = bytes;
    if (nr)
        rc = sib_xfer_vec(&to, write, b->liov, nl_used, b->riov, nr, &moved);
    if (rc == ESRCH) {
        /* the responder's process is gone: nothing arrived */
        sib_qp_unlock(d);
        return -1;
    }
    if (rc) {
        /* a fault: the WQEs wholly moved before it completed; the one that
         * hit it runs alone (and fails as it would have) */
        uint64_t end = 0;

        for (i = 0; i < n; i++) {
            end += sib_sq_entry(qp, qp->sq_head + (uint64_t)i)->len;
            if (end > moved)
                break;
        }
        n = i;
        if (!n) {
            sib_qp_unlock(d);
            return 0;
        }
    }
    /* both ends consumed the same number of PSNs */
    mtu = sib_mtu_bytes(me->path_mtu);
    for (i = 0; i < n; i++)
        pkts += npkts(sib_sq_entry(qp, qp->sq_head + (uint64_t)i)->len, mtu);
    d->rq_psn = (uint32_t)((d->rq_psn + pkts) & 0xffffff);
    me->sq_psn = (uint32_t)((me->sq_psn + pkts) & 0xffffff);
    sib_qp_unlock(d);
    return n;
}

/* ---- UD ---- */

static void drop_other(struct sib_qp *qp)
{
    SIB_COUNT(qp->ctx->f, ud_drops_other, 1);
}

static bool dest_accepts(const struct sib_qp *qp, const struct sib_dgram *d,
                         const struct sib_fqp *t)
{
    uint32_t qkey = (d->remote_qkey & 0x80000000u) ? qp->f->qkey : d->remote_qkey;

    return t->type == IBV_QPT_UD && (t->state == IBV_QPS_RTR || t->state == IBV_QPS_RTS) &&
           !t->deaf && sib_av_reaches(&d->ah, t->owner) && qkey == t->qkey;
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
        if (sib_knobs.ud_err_silent) {
            /* As rdma_rxe was seen to do under a flood of datagrams too long for their
             * buffers: the QP is in ERR, and neither this receive nor the others complete. */
            __atomic_store_n(&t->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
            return;
        }
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

void sib_resp_ud(struct sib_qp *qp, const struct sib_dgram *d, const struct iovec *liov, int nl,
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
