/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send / ibv_post_recv: validate each work request the way a
 * provider does at post time (errno, *bad_wr), then queue it. A send WQE
 * copies its SGE list (and inline payload) and is executed by req.c,
 * right away unless SOFTIB_DEFERRED or the wire model holds it back.
 *
 * Send-queue slots: a WQE keeps its slot until a completion at or after it
 * is polled, as on mlx5, so posting unsignaled WRs without ever polling a
 * signaled one fills the queue (ENOMEM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "sib.h"

static bool rc_only(enum ibv_wr_opcode op)
{
    return op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_RDMA_READ ||
           op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static bool is_atomic(enum ibv_wr_opcode op)
{
    return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static int check_send(const struct sib_qp *qp, const struct ibv_send_wr *wr, uint64_t *len)
{
    const struct sib_fqp *f = qp->f;
    struct ibv_ah_attr ah;

    if (wr->num_sge < 0 || (uint32_t)wr->num_sge > f->cap.max_send_sge ||
        (wr->num_sge && !wr->sg_list))
        return EINVAL;
    if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM && !rc_only(wr->opcode))
        return EINVAL;
    if (f->type == IBV_QPT_UD && rc_only(wr->opcode))
        return EINVAL; /* no RDMA or atomics on datagram QPs */
    *len = 0;
    for (int i = 0; i < wr->num_sge; i++)
        *len += wr->sg_list[i].length;
    if (*len > SIB_MAX_MSG)
        return EINVAL;
    if (wr->send_flags & IBV_SEND_INLINE) {
        if (*len > qp->max_inline || wr->opcode == IBV_WR_RDMA_READ || is_atomic(wr->opcode))
            return EINVAL;
    }
    if (is_atomic(wr->opcode) &&
        (wr->num_sge != 1 || wr->sg_list[0].length != 8 || (wr->wr.atomic.remote_addr & 7)))
        return EINVAL;
    if (f->type == IBV_QPT_UD) {
        if (!sib_ah_get(wr->wr.ud.ah, &ah))
            return EINVAL;
        if (*len > sib_mtu_bytes((int)sib_fab.hdr->mtu_enum))
            return EINVAL; /* a datagram is one packet */
    }
    return 0;
}

/* When the modeled wire delivers this WQE: latency, then serialisation. */
static uint64_t wire_due(struct sib_qp *qp, uint64_t len)
{
    uint64_t t = sib_now_ns() + (uint64_t)sib_knobs.wire_latency_us * 1000;

    if (t < qp->wire_free)
        t = qp->wire_free;
    if (sib_knobs.wire_mbps)
        t += len * 8000 / sib_knobs.wire_mbps; /* bits / (Mbit/s) in ns */
    qp->wire_free = t;
    return t;
}

static void enqueue(struct sib_qp *qp, const struct ibv_send_wr *wr, uint64_t len)
{
    struct sib_swqe *w = sib_sq_entry(qp, qp->sq_tail);
    bool inl = (wr->send_flags & IBV_SEND_INLINE) != 0;

    w->wr_id = wr->wr_id;
    w->seq = qp->sq_tail;
    w->opcode = wr->opcode;
    w->flags = wr->send_flags;
    w->imm = wr->imm_data;
    w->len = len;
    w->num_sge = inl ? 0 : (uint32_t)wr->num_sge;
    w->inline_len = inl ? (uint32_t)len : 0;
    if (is_atomic(wr->opcode)) {
        w->raddr = wr->wr.atomic.remote_addr;
        w->rkey = wr->wr.atomic.rkey;
        w->compare_add = wr->wr.atomic.compare_add;
        w->swap = wr->wr.atomic.swap;
    } else {
        w->raddr = wr->wr.rdma.remote_addr;
        w->rkey = wr->wr.rdma.rkey;
    }
    if (qp->f->type == IBV_QPT_UD) {
        sib_ah_get(wr->wr.ud.ah, &w->ud.ah);
        w->ud.remote_qpn = wr->wr.ud.remote_qpn;
        w->ud.remote_qkey = wr->wr.ud.remote_qkey;
        w->ud.opcode = wr->opcode;
        w->ud.imm = wr->imm_data;
        w->ud.flags = wr->send_flags;
    }
    if (inl) {
        /* inline: the buffer may be reused as soon as post_send returns */
        uint8_t *p = sib_swqe_inline(qp, w);

        for (int i = 0; i < wr->num_sge; i++) {
            memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
            p += wr->sg_list[i].length;
        }
    } else {
        memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(struct ibv_sge));
    }
    w->not_before = sib_wire_model() ? wire_due(qp, len) : 0;
    w->started = false;
    __atomic_store_n(&qp->sq_tail, qp->sq_tail + 1, __ATOMIC_RELEASE); /* see sib_progress */
}

int sib_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct sib_qp *qp = sib_qp(ibqp);
    int rc = 0, n = 0;
    uint8_t state;

    if (!qp || !bad) {
        if (bad)
            *bad = wr;
        return sib_err(EINVAL);
    }
    pthread_mutex_lock(&qp->sq_lock);
    state = __atomic_load_n(&qp->f->state, __ATOMIC_ACQUIRE);
    for (; wr; wr = wr->next) {
        uint64_t len;

        /* RTS sends; ERR accepts and flushes; anything earlier refuses */
        if (state != IBV_QPS_RTS && state != IBV_QPS_ERR) {
            rc = EINVAL;
            break;
        }
        rc = check_send(qp, wr, &len);
        if (!rc && qp->sq_tail - __atomic_load_n(&qp->f->sq_retired, __ATOMIC_ACQUIRE) >=
                       qp->f->cap.max_send_wr)
            rc = ENOMEM;
        if (rc)
            break;
        enqueue(qp, wr, len);
        n++;
    }
    if (rc)
        *bad = wr;
    if (n) {
        sib_ctx_pending_add(qp->ctx, n);
        if (!sib_knobs.deferred)
            sib_sq_run(qp);
    }
    pthread_mutex_unlock(&qp->sq_lock);
    return rc ? sib_err(rc) : 0;
}

int sib_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct sib_qp *qp = sib_qp(ibqp);
    struct sib_fqp *f;
    int rc = 0;

    if (!qp || !bad || qp->srq) {
        if (bad)
            *bad = wr;
        return sib_err(EINVAL); /* a QP attached to an SRQ takes no receives of its own */
    }
    f = qp->f;
    sib_lock(&f->lock);
    if (f->state == IBV_QPS_RESET) {
        rc = EINVAL;
        *bad = wr;
    }
    for (; wr && !rc; wr = wr->next) {
        rc = sib_rq_post(&f->rq, wr);
        if (rc)
            *bad = wr;
    }
    if (f->state == IBV_QPS_ERR)
        sib_qp_flush_rq_locked(f);
    sib_unlock(&f->lock);
    return rc ? sib_err(rc) : 0;
}
