/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive queues: the ring behind a QP's receive queue or an SRQ, living in
 * the fabric because the sender's process consumes it. The owner posts, any
 * sender pops, both under the QP's (or SRQ's) lock; and where an incoming
 * message lands. The SRQ verbs are in srq.c.
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
