/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues: the SRQ verbs over a receive-queue ring of rq.c
 * in the fabric, with its limit (armed by ibv_modify_srq, fired by rq.c
 * when a sender takes the queue below it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "sib.h"

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

struct ibv_srq *sib_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *init)
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

int sib_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
    struct sib_srq *srq = sib_srq(ibsrq);
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

int sib_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
    struct sib_srq *srq = sib_srq(ibsrq);

    if (!srq || !attr)
        return sib_err(EINVAL);
    sib_lock(&srq->f->lock);
    attr->max_wr = srq->f->rq.cap;
    attr->max_sge = srq->f->rq.max_sge;
    attr->srq_limit = srq->f->limit;
    sib_unlock(&srq->f->lock);
    return 0;
}

int sib_destroy_srq(struct ibv_srq *ibsrq)
{
    struct sib_srq *srq = sib_srq(ibsrq);
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
    struct sib_srq *srq = sib_srq(ibsrq);
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
