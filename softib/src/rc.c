/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliable connected transport: one send WQE against the responder QP.
 *
 * The requester does the responder's work too, under the responder QP's
 * lock: it checks that a packet would be accepted (QP exists, connected
 * back to us, address, state, PSN), then the operation's rules (QP access
 * flags, rkey, receive WQE), moves the bytes and writes the responder's
 * completion. Anything a real responder would silently drop is "lost" and
 * retransmitted; anything it would NAK fails both QPs the way rxe does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

_Static_assert(SIB_BATCH_IOV <= IOV_MAX, "a batch's iovecs must fit one process_vm_writev");
_Static_assert(SIB_BATCH_IOV >= SIB_MAX_SGE, "a batch takes any one WQE");

enum rc_verdict {
    RC_OK,
    RC_LOST, /* dropped on the wire: retransmit */
    RC_RNR,  /* no receive WQE: RNR NAK */
    RC_NAK,  /* fatal NAK: requester completes with `status` */
};

struct rc_op {
    struct sib_qp *qp;
    struct sib_swqe *w;
    struct sib_fqp *dest; /* locked */
    struct iovec liov[SIB_MAX_SGE];
    int nl;
    enum ibv_wc_status status; /* RC_NAK: the requester's completion */
    uint8_t rnr_timer;         /* RC_RNR: the responder's min_rnr_timer */
};

/* The responder rejects the request and goes to the error state with us. */
static enum rc_verdict nak(struct rc_op *op, enum ibv_wc_status st)
{
    sib_qp_to_err_locked(op->dest);
    op->status = st;
    return RC_NAK;
}

static void responder_completion(struct rc_op *op, const struct sib_rwqe *r,
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

static enum rc_verdict do_send(struct rc_op *op)
{
    struct sib_fqp *d = op->dest;
    struct sib_peer to = sib_qp_peer(d);
    struct iovec riov[SIB_MAX_SGE];
    struct sib_rwqe_taken r;
    enum ibv_wc_status st;
    uint64_t pd;
    int nr = 0, rc;

    if (!sib_dest_take(d, &r, &pd))
        return RC_RNR;
    st = sib_recv_iov(pd, sib_taken_rwqe(&r), op->w->len, riov, &nr);
    if (st == IBV_WC_SUCCESS) {
        rc = sib_xfer(&to, true, op->liov, op->nl, riov, nr);
        if (rc == ESRCH)
            return RC_LOST; /* the responder's process is gone, and its WQE with it */
        st = rc ? IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS;
    }
    responder_completion(op, sib_taken_rwqe(&r), IBV_WC_RECV, st);
    if (st == IBV_WC_LOC_LEN_ERR)
        return nak(op, IBV_WC_REM_INV_REQ_ERR);
    if (st != IBV_WC_SUCCESS)
        return nak(op, IBV_WC_REM_OP_ERR);
    SIB_COUNT(op->qp->ctx->f, sends, 1);
    SIB_COUNT(op->qp->ctx->f, send_bytes, op->w->len);
    return RC_OK;
}

/* rkey check of an RDMA/atomic request to d; *va is the target address. */
static bool rkey_check(const struct sib_fqp *d, uint32_t rkey, uint64_t raddr, uint64_t len,
                       uint32_t need, struct sib_fmr *mr, uint64_t *va)
{
    return sib_mr_lookup(rkey, true, mr) && mr->pd == d->pd &&
           sib_mr_range(mr, raddr, len, need, va);
}

static bool rkey_ok(struct rc_op *op, uint64_t len, uint32_t need, struct sib_fmr *mr, uint64_t *va)
{
    return rkey_check(op->dest, op->w->rkey, op->w->raddr, len, need, mr, va);
}

static enum rc_verdict do_rdma(struct rc_op *op, bool write)
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
            return RC_LOST;
    }
    if (op->w->len) {
        riov.iov_base = (void *)(uintptr_t)va;
        riov.iov_len = op->w->len;
        to = sib_mr_peer(&mr);
        rc = sib_xfer(&to, write, op->liov, op->nl, &riov, 1);
    }
    if (rc == ESRCH)
        return RC_LOST;
    if (rc)
        return nak(op, IBV_WC_REM_ACCESS_ERR); /* a receive WQE is flushed by nak */
    /* The immediate's receive WQE is taken once the data is in place: without one the
     * request is NAKed RNR and retried, writing the same bytes again. */
    if (imm) {
        if (!sib_dest_take(d, &r, &pd))
            return RC_RNR;
        responder_completion(op, sib_taken_rwqe(&r), IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS);
    }
    if (write) {
        SIB_COUNT(op->qp->ctx->f, rdma_writes, 1);
        SIB_COUNT(op->qp->ctx->f, rdma_write_bytes, op->w->len);
    } else {
        SIB_COUNT(op->qp->ctx->f, rdma_reads, 1);
        SIB_COUNT(op->qp->ctx->f, rdma_read_bytes, op->w->len);
    }
    return RC_OK;
}

static enum rc_verdict do_atomic(struct rc_op *op)
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
        return RC_LOST;
    if (rc)
        return nak(op, IBV_WC_REM_ACCESS_ERR);
    memcpy(op->liov[0].iov_base, &orig, sizeof(orig)); /* our own buffer */
    SIB_COUNT(op->qp->ctx->f, atomics, 1);
    return RC_OK;
}

/* Would the responder accept a packet from us at all? */
static bool accepted(const struct sib_fqp *me, const struct sib_fqp *d)
{
    return d->type == IBV_QPT_RC && d->dest_qpn == me->qpn && sib_av_reaches(&me->ah, d->owner) &&
           (d->state == IBV_QPS_RTR || d->state == IBV_QPS_RTS) && d->rq_psn == me->sq_psn;
}

static enum rc_verdict deliver(struct rc_op *op)
{
    struct sib_fqp *me = op->qp->f;
    enum rc_verdict v;
    uint32_t n;

    op->dest = sib_qp_lookup_lock(me->dest_qpn);
    if (!op->dest)
        return RC_LOST;
    if (!accepted(me, op->dest)) {
        sib_qp_unlock(op->dest);
        return RC_LOST;
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
    if (v == RC_OK) {
        /* both ends consumed the same number of PSNs */
        n = sib_npkts(op->w->len, sib_mtu_bytes(me->path_mtu));
        op->dest->rq_psn = (op->dest->rq_psn + n) & 0xffffff;
        me->sq_psn = (me->sq_psn + n) & 0xffffff;
    }
    if (v == RC_RNR) {
        const struct sib_fctx *owner = sib_fctx_at(&sib_fab, op->dest->owner);

        /* a dead process's QP is gone, not merely short of receives */
        if (!sib_pid_alive(owner->pid, owner->start_time))
            v = RC_LOST;
        op->rnr_timer = op->dest->min_rnr_timer;
    }
    sib_qp_unlock(op->dest);
    return v;
}

enum sib_step sib_rc_exec(struct sib_qp *qp, struct sib_swqe *w)
{
    struct rc_op op = {.qp = qp, .w = w};
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
    switch (deliver(&op)) {
    case RC_OK:
        sib_sq_complete(qp, w, IBV_WC_SUCCESS);
        return SIB_STEP_DONE;
    case RC_LOST:
        return sib_retry_lost(qp, w);
    case RC_RNR:
        return sib_retry_rnr(qp, w, op.rnr_timer);
    default:
        return sib_sq_fail(qp, w, op.status);
    }
}

/* ---- batches of RDMA WRITEs / READs ---- */

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
 * after it go as one batch: one lookup and lock of the responder QP, one
 * accepted() and QP-access check, each WQE's local SGEs and rkey checked as
 * alone, then one process_vm_writev/readv for all of them, per-WQE PSNs and
 * counters, and the completions in order. A WQE that would fail (or that
 * does not fit) ends the batch before it and later runs alone, with the
 * usual error semantics; so does everything when the head would fail.
 */
enum sib_batch_step sib_rc_batch(struct sib_qp *qp, uint64_t *now)
{
    struct sib_swqe *head = sib_sq_entry(qp, qp->sq_head);
    bool write = head->opcode == IBV_WR_RDMA_WRITE;
    uint32_t need = write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
    struct sib_fqp *me = qp->f, *d;
    uint64_t bytes = 0, moved = 0, pkts = 0, ok_bytes = 0;
    uint32_t mtu, ok = 0;
    struct sib_batch *b;
    struct sib_fmr mr;
    struct sib_peer to = {0};
    bool have_peer = false;
    int n, i, nl, nl_used = 0, nr = 0, rc = 0;

    if (head->opcode != IBV_WR_RDMA_WRITE && head->opcode != IBV_WR_RDMA_READ)
        return SIB_BATCH_NONE;
    if (!qp->batch && !(qp->batch = malloc(sizeof(*qp->batch))))
        return SIB_BATCH_NONE;
    b = qp->batch;
    n = batch_local(qp, b, now, &nl);
    if (!n)
        return SIB_BATCH_NONE;

    d = sib_qp_lookup_lock(me->dest_qpn);
    if (!d)
        return SIB_BATCH_NONE;
    if (!accepted(me, d) || !(d->access & need)) {
        sib_qp_unlock(d);
        return SIB_BATCH_NONE;
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
        return SIB_BATCH_NONE;
    }
    moved = bytes;
    if (nr)
        rc = sib_xfer_vec(&to, write, b->liov, nl_used, b->riov, nr, &moved);
    if (rc == ESRCH) {
        /* the responder's process is gone: nothing arrived, retransmit */
        sib_qp_unlock(d);
        sib_sq_start(qp, head);
        return sib_retry_lost(qp, head) == SIB_STEP_WAIT ? SIB_BATCH_WAIT : SIB_BATCH_DONE;
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
            return SIB_BATCH_NONE;
        }
    }
    /* both ends consumed the same number of PSNs */
    mtu = sib_mtu_bytes(me->path_mtu);
    for (i = 0; i < n; i++)
        pkts += sib_npkts(sib_sq_entry(qp, qp->sq_head + (uint64_t)i)->len, mtu);
    d->rq_psn = (uint32_t)((d->rq_psn + pkts) & 0xffffff);
    me->sq_psn = (uint32_t)((me->sq_psn + pkts) & 0xffffff);
    sib_qp_unlock(d);

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
