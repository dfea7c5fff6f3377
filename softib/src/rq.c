/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive queues: the ring behind a QP's receive queue or an SRQ, living in
 * the fabric because the sender's process consumes it. The owner posts, any
 * sender pops, both under the QP's (or SRQ's) lock. Also the SRQ verbs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

/* ---- the ring (caller holds the owning lock; alloc/free the global one) ---- */

int sib_rq_alloc(struct sib_rq *rq, uint32_t cap, uint32_t max_sge)
{
    memset(rq, 0, sizeof(*rq));
    rq->cap = cap;
    rq->max_sge = max_sge;
    rq->stride = (uint32_t)(sizeof(struct sib_rwqe) + max_sge * sizeof(struct ibv_sge));
    if (!cap)
        return 0;
    rq->ring_bytes = (uint64_t)cap * rq->stride;
    rq->ring = sib_heap_alloc(&sib_fab, rq->ring_bytes);
    return rq->ring ? 0 : ENOMEM;
}

void sib_rq_free(struct sib_rq *rq)
{
    sib_heap_free(&sib_fab, rq->ring, rq->ring_bytes);
    rq->ring = 0;
    rq->cap = 0;
}

static struct sib_rwqe *rq_at(struct sib_rq *rq, uint32_t i)
{
    return (struct sib_rwqe *)((uint8_t *)sib_ptr(&sib_fab, rq->ring) +
                               (uint64_t)(i % rq->cap) * rq->stride);
}

int sib_rq_post(struct sib_rq *rq, const struct ibv_recv_wr *wr)
{
    struct sib_rwqe *e;

    if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge || (wr->num_sge && !wr->sg_list))
        return EINVAL;
    if (rq->tail - rq->head >= rq->cap)
        return ENOMEM;
    e = rq_at(rq, rq->tail);
    e->wr_id = wr->wr_id;
    e->num_sge = (uint32_t)wr->num_sge;
    memcpy(e->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(struct ibv_sge));
    rq->tail++;
    return 0;
}

struct sib_rwqe *sib_rq_peek(struct sib_rq *rq)
{
    return rq->head == rq->tail ? NULL : rq_at(rq, rq->head);
}

void sib_rq_pop(struct sib_rq *rq)
{
    rq->head++;
}

uint32_t sib_rq_count(const struct sib_rq *rq)
{
    return rq->tail - rq->head;
}

static struct sib_rq *srq_lock_rq(uint32_t srq_slot)
{
    struct sib_fsrq *s = sib_fsrq_at(&sib_fab, srq_slot);

    sib_lock(&s->lock);
    if (!s->in_use) {
        sib_unlock(&s->lock);
        return NULL;
    }
    return &s->rq;
}

static void srq_unlock(uint32_t srq_slot)
{
    sib_unlock(&sib_fsrq_at(&sib_fab, srq_slot)->lock);
}

static void srq_consumed(uint32_t srq_slot)
{
    struct sib_fsrq *s = sib_fsrq_at(&sib_fab, srq_slot);

    if (s->limit && sib_rq_count(&s->rq) < s->limit) {
        s->limit = 0; /* the limit event fires once per arming */
        sib_async_post(s->owner, IBV_EVENT_SRQ_LIMIT_REACHED, SIB_K_SRQ, srq_slot, s->gen);
    }
}

/* ---- where an incoming message lands (the QP's lock held) ---- */

_Static_assert(offsetof(struct sib_rwqe_taken, sge) == offsetof(struct sib_rwqe, sge),
               "a taken WQE reads as the ring's");

static void take(struct sib_rq *rq, struct sib_rwqe_taken *out)
{
    const struct sib_rwqe *r = sib_rq_peek(rq);

    out->wr_id = r->wr_id;
    out->num_sge = r->num_sge;
    memcpy(out->sge, r->sge, (size_t)r->num_sge * sizeof(struct ibv_sge));
    sib_rq_pop(rq);
}

bool sib_dest_take(struct sib_fqp *q, struct sib_rwqe_taken *out, uint64_t *pd)
{
    struct sib_rq *rq;
    uint32_t slot;

    if (!q->srq) {
        *pd = q->pd;
        if (!sib_rq_peek(&q->rq))
            return false;
        take(&q->rq, out);
        return true;
    }
    /* The SRQ's lock is held only to take the WQE: its owner reposts meanwhile. */
    slot = q->srq - 1;
    *pd = sib_fsrq_at(&sib_fab, slot)->pd;
    rq = srq_lock_rq(slot);
    if (!rq)
        return false; /* the SRQ is gone */
    if (!sib_rq_peek(rq)) {
        srq_unlock(slot);
        return false;
    }
    take(rq, out);
    srq_consumed(slot);
    srq_unlock(slot);
    return true;
}

/* ---- SRQ ---- */

static struct sib_srq *to_srq(struct ibv_srq *ibsrq)
{
    struct sib_srq *s = ibsrq ? sib_container_of(ibsrq, struct sib_srq, ibsrq) : NULL;

    return s && sib_obj_ok(&s->o, SIB_K_SRQ) ? s : NULL;
}

struct sib_srq *sib_srq(struct ibv_srq *ibsrq)
{
    return to_srq(ibsrq);
}

static int srq_slot_alloc(uint32_t *idx)
{
    for (uint32_t i = 0; i < SIB_MAX_SRQ; i++) {
        if (!sib_fsrq_at(&sib_fab, i)->in_use) {
            *idx = i;
            sib_slot_used(&sib_fab.hdr->srq_used, i);
            return 0;
        }
    }
    return ENOMEM;
}

SIB_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *init)
{
    struct sib_pd *pd = sib_pd(ibpd);
    struct sib_context *ctx;
    struct sib_fsrq *f;
    struct sib_srq *srq;
    uint32_t idx;
    int rc;

    if (!pd || !init || init->attr.max_wr < 1 || init->attr.max_wr > SIB_MAX_WR ||
        init->attr.max_sge < 1 || init->attr.max_sge > SIB_MAX_SGE)
        return sib_null(EINVAL);
    ctx = sib_ctx(ibpd->context);
    srq = calloc(1, sizeof(*srq));
    if (!srq)
        return sib_null(ENOMEM);
    sib_lock(&sib_fab.hdr->lock);
    rc = srq_slot_alloc(&idx);
    f = rc ? NULL : sib_fsrq_at(&sib_fab, idx);
    if (f)
        rc = sib_rq_alloc(&f->rq, init->attr.max_wr, init->attr.max_sge);
    if (rc) {
        sib_unlock(&sib_fab.hdr->lock);
        free(srq);
        return sib_null(rc);
    }
    sib_lock_lazy_init(&f->lock, &f->lock_ready);
    f->gen++;
    f->owner = ctx->slot;
    f->limit = 0;
    f->pd = pd->id;
    f->owner_ptr = (uintptr_t)&srq->ibsrq;
    __atomic_store_n(&f->in_use, 1, __ATOMIC_RELEASE);
    sib_unlock(&sib_fab.hdr->lock);

    srq->slot = idx;
    srq->f = f;
    srq->ibsrq.context = ibpd->context;
    srq->ibsrq.srq_context = init->srq_context;
    srq->ibsrq.pd = ibpd;
    srq->ibsrq.handle = idx;
    pthread_mutex_init(&srq->ibsrq.mutex, NULL);
    pthread_cond_init(&srq->ibsrq.cond, NULL);
    sib_obj_init(&srq->o, SIB_K_SRQ, srq);
    __atomic_fetch_add(&pd->users, 1, __ATOMIC_RELAXED);
    init->attr.srq_limit = 0;
    return &srq->ibsrq;
}

SIB_EXPORT int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
    struct sib_srq *srq = to_srq(ibsrq);
    int rc = 0;

    /* resizing is not offered (no IBV_DEVICE_SRQ_RESIZE) */
    if (!srq || !attr || (mask & ~IBV_SRQ_LIMIT) || !mask)
        return sib_err(EINVAL);
    sib_lock(&srq->f->lock);
    if (attr->srq_limit > srq->f->rq.cap)
        rc = EINVAL;
    else
        srq->f->limit = attr->srq_limit;
    sib_unlock(&srq->f->lock);
    return rc ? sib_err(rc) : 0;
}

SIB_EXPORT int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
    struct sib_srq *srq = to_srq(ibsrq);

    if (!srq || !attr)
        return sib_err(EINVAL);
    sib_lock(&srq->f->lock);
    attr->max_wr = srq->f->rq.cap;
    attr->max_sge = srq->f->rq.max_sge;
    attr->srq_limit = srq->f->limit;
    sib_unlock(&srq->f->lock);
    return 0;
}

SIB_EXPORT int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
    struct sib_srq *srq = to_srq(ibsrq);
    struct sib_fsrq *f;

    if (!srq)
        return sib_err(EINVAL);
    if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE))
        return sib_err(EBUSY);
    f = srq->f;
    sib_lock(&sib_fab.hdr->lock);
    sib_lock(&f->lock);
    __atomic_store_n(&f->in_use, 0, __ATOMIC_RELEASE);
    sib_rq_free(&f->rq);
    sib_unlock(&f->lock);
    sib_unlock(&sib_fab.hdr->lock);
    __atomic_fetch_sub(&sib_pd(ibsrq->pd)->users, 1, __ATOMIC_RELAXED);
    sib_obj_bury(sib_ctx(ibsrq->context), &srq->o);
    return 0;
}

int sib_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct sib_srq *srq = to_srq(ibsrq);
    int rc = 0;

    if (!srq || !bad) {
        if (bad)
            *bad = wr;
        return sib_err(EINVAL);
    }
    sib_lock(&srq->f->lock);
    for (; wr; wr = wr->next) {
        rc = sib_rq_post(&srq->f->rq, wr);
        if (rc) {
            *bad = wr;
            break;
        }
    }
    sib_unlock(&srq->f->lock);
    return rc ? sib_err(rc) : 0;
}
