/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Releasing what a context owns in the fabric (its QPs, SRQs, CQs and
 * MRs), when it leaves or when its process is found dead. Global lock held.
 */
#define _GNU_SOURCE

#include "reclaim.h"

#include "heap.h"
#include "lock.h"
#include "proc.h"

static void release_qps(struct sib_fabric *f, uint32_t owner)
{
    /* Only the window has ever been handed out (qp.c): the rest need not be touched. */
    for (uint32_t i = 0; i < f->hdr->qp_window; i++) {
        struct sib_fqp *q = sib_fqp_at(f, i);

        if (!q->qpn || q->owner != owner)
            continue;
        sib_lock(&q->lock);
        __atomic_store_n(&q->qpn, 0, __ATOMIC_RELEASE);
        sib_heap_free(f, q->rq.ring, q->rq.ring_bytes);
        q->rq.ring = 0;
        sib_unlock(&q->lock);
    }
}

static void release_cqs(struct sib_fabric *f, uint32_t owner)
{
    for (uint32_t i = 0; i < f->hdr->cq_used; i++) {
        struct sib_fcq *c = sib_fcq_at(f, i);

        if (!c->in_use || c->owner != owner)
            continue;
        sib_lock(&c->lock);
        __atomic_store_n(&c->in_use, 0, __ATOMIC_RELEASE);
        sib_heap_free(f, c->ring, c->ring_bytes);
        c->ring = 0;
        sib_unlock(&c->lock);
    }
}

static void release_srqs(struct sib_fabric *f, uint32_t owner)
{
    for (uint32_t i = 0; i < f->hdr->srq_used; i++) {
        struct sib_fsrq *s = sib_fsrq_at(f, i);

        if (!s->in_use || s->owner != owner)
            continue;
        sib_lock(&s->lock);
        __atomic_store_n(&s->in_use, 0, __ATOMIC_RELEASE);
        sib_heap_free(f, s->rq.ring, s->rq.ring_bytes);
        s->rq.ring = 0;
        sib_unlock(&s->lock);
    }
}

static void release_mrs(struct sib_fabric *f, uint32_t owner)
{
    sib_mr_lock(f);
    for (uint32_t i = 0; i < f->hdr->mr_used; i++) {
        struct sib_fmr *m = sib_fmr_at(f, i);

        if (m->lkey && m->owner == owner)
            sib_fmr_clear(m);
    }
    sib_mr_unlock(f);
}

void sib_ctx_release(struct sib_fabric *f, uint32_t slot)
{
    release_qps(f, slot);
    release_srqs(f, slot);
    release_cqs(f, slot);
    release_mrs(f, slot);
    __atomic_store_n(&sib_fctx_at(f, slot)->in_use, 0, __ATOMIC_RELEASE);
}

uint32_t sib_reclaim(struct sib_fabric *f)
{
    uint32_t live = 0;

    for (uint32_t i = 0; i < f->hdr->ctx_used; i++) {
        struct sib_fctx *c = sib_fctx_at(f, i);

        if (!c->in_use)
            continue;
        if (sib_pid_alive(c->pid, c->start_time))
            live++;
        else
            sib_ctx_release(f, i);
    }
    return live;
}
