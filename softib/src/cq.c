/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues and completion channels.
 *
 * A CQ is a ring in the fabric: any process may push (a sender delivering
 * into our receive queue completes it for us), only the owner pops. When a
 * push finds the CQ armed, it marks the CQ's event pending and wakes the
 * channel's socket; ibv_get_cq_event (verbs.c) returns the CQ whose flag it
 * clears. Polling and waiting also progress the engine, so they are verbs.c's:
 * this file only pushes and pops.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sib.h"

/* ---- channels ---- */

struct ibv_comp_channel *sib_create_comp_channel(struct ibv_context *context)
{
    struct sib_channel *c;
    int fd;

    if (!sib_ctx(context))
        return sib_null(EINVAL);
    c = calloc(1, sizeof(*c));
    if (!c)
        return sib_null(ENOMEM);
    fd = sib_sock_open(&c->addr);
    if (fd < 0) {
        free(c);
        return sib_null(-fd);
    }
    c->ch.context = context;
    c->ch.fd = fd;
    pthread_mutex_init(&c->lock, NULL);
    sib_obj_init(&c->o, SIB_K_CHAN, c);
    return &c->ch;
}

int sib_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    struct sib_channel *c = sib_chan(channel);

    if (!c)
        return sib_err(EINVAL);
    if (__atomic_load_n(&c->users, __ATOMIC_ACQUIRE))
        return sib_err(EBUSY);
    close(channel->fd);
    sib_obj_bury(sib_ctx(channel->context), &c->o);
    return 0;
}

static void chan_attach(struct sib_channel *c, struct sib_cq *cq)
{
    pthread_mutex_lock(&c->lock);
    cq->chan_next = c->cqs;
    c->cqs = cq;
    c->users++;
    pthread_mutex_unlock(&c->lock);
}

void sib_cq_chan_detach(struct sib_cq *cq)
{
    struct sib_channel *c = cq->chan;
    struct sib_cq **pp;

    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    for (pp = &c->cqs; *pp; pp = &(*pp)->chan_next) {
        if (*pp == cq) {
            *pp = cq->chan_next;
            c->users--;
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    cq->chan = NULL;
}

/* Claim one CQ with a pending event; *more says whether others remain. */
struct sib_cq *sib_chan_take(struct sib_channel *c, bool *more)
{
    struct sib_cq *got = NULL, *cq;

    *more = false;
    pthread_mutex_lock(&c->lock);
    for (cq = c->cqs; cq; cq = cq->chan_next) {
        if (!__atomic_load_n(&cq->f->ev_pending, __ATOMIC_ACQUIRE))
            continue;
        if (got) {
            *more = true;
            break;
        }
        if (__atomic_exchange_n(&cq->f->ev_pending, 0, __ATOMIC_ACQ_REL))
            got = cq;
    }
    /* rotate so a busy CQ cannot starve the others */
    if (got && got != c->cqs) {
        struct sib_cq **pp;

        for (pp = &c->cqs; *pp != got; pp = &(*pp)->chan_next)
            ;
        *pp = got->chan_next;
        for (pp = &c->cqs; *pp; pp = &(*pp)->chan_next)
            ;
        *pp = got;
        got->chan_next = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    return got;
}

void sib_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
    if (sib_cq(ibcq))
        __atomic_fetch_add(&ibcq->comp_events_completed, nevents, __ATOMIC_RELAXED);
}

/* ---- CQs ---- */

static int cq_slot_alloc(uint32_t *idx)
{
    for (uint32_t i = 0; i < SIB_MAX_CQ; i++) {
        if (!sib_fcq_at(&sib_fab, i)->in_use) {
            *idx = i;
            sib_slot_used(&sib_fab.hdr->cq_used, i);
            return 0;
        }
    }
    return ENOMEM;
}

struct ibv_cq *sib_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int comp_vector)
{
    struct sib_context *ctx = sib_ctx(context);
    struct sib_channel *chan = channel ? sib_chan(channel) : NULL;
    uint64_t bytes = (uint64_t)(cqe > 0 ? cqe : 1) * sizeof(struct sib_cqe);
    struct sib_fcq *f;
    struct sib_cq *cq;
    uint32_t idx;
    sib_off ring = 0;
    int rc;

    if (!ctx || cqe < 1 || (uint32_t)cqe > SIB_MAX_CQE || comp_vector != 0 ||
        (channel && (!chan || channel->context != context)))
        return sib_null(EINVAL);
    cq = calloc(1, sizeof(*cq));
    if (!cq)
        return sib_null(ENOMEM);
    sib_lock(&sib_fab.hdr->lock);
    rc = cq_slot_alloc(&idx);
    if (!rc) {
        ring = sib_heap_alloc(&sib_fab, bytes);
        rc = ring ? 0 : ENOMEM;
    }
    if (rc) {
        sib_unlock(&sib_fab.hdr->lock);
        free(cq);
        return sib_null(rc);
    }
    f = sib_fcq_at(&sib_fab, idx);
    sib_lock_lazy_init(&f->lock, &f->lock_ready);
    f->gen++;
    f->owner = ctx->slot;
    f->cap = (uint32_t)cqe;
    f->head = f->tail = 0;
    f->armed = f->ev_pending = f->overrun = 0;
    memset(&f->chan, 0, sizeof(f->chan));
    if (chan)
        f->chan = chan->addr;
    f->ring = ring;
    f->ring_bytes = bytes;
    f->owner_ptr = (uintptr_t)&cq->ibcq;
    __atomic_store_n(&f->in_use, 1, __ATOMIC_RELEASE);
    sib_unlock(&sib_fab.hdr->lock);

    cq->slot = idx;
    cq->gen = f->gen;
    cq->f = f;
    cq->ibcq.context = context;
    cq->ibcq.channel = channel;
    cq->ibcq.cq_context = cq_context;
    cq->ibcq.handle = idx;
    cq->ibcq.cqe = cqe;
    pthread_mutex_init(&cq->ibcq.mutex, NULL);
    pthread_cond_init(&cq->ibcq.cond, NULL);
    sib_obj_init(&cq->o, SIB_K_CQ, cq);
    if (chan) {
        cq->chan = chan;
        chan_attach(chan, cq);
    }
    return &cq->ibcq;
}

int sib_destroy_cq(struct ibv_cq *ibcq)
{
    struct sib_cq *cq = sib_cq(ibcq);
    struct sib_fcq *f;

    if (!cq)
        return sib_err(EINVAL);
    if (__atomic_load_n(&cq->users, __ATOMIC_ACQUIRE))
        return sib_err(EBUSY);
    sib_cq_chan_detach(cq);
    f = cq->f;
    sib_lock(&sib_fab.hdr->lock);
    sib_lock(&f->lock);
    if (f->in_use && f->gen == cq->gen) {
        __atomic_store_n(&f->in_use, 0, __ATOMIC_RELEASE);
        sib_heap_free(&sib_fab, f->ring, f->ring_bytes);
        f->ring = 0;
    }
    sib_unlock(&f->lock);
    sib_unlock(&sib_fab.hdr->lock);
    sib_obj_bury(sib_ctx(ibcq->context), &cq->o);
    return 0;
}

int sib_resize_cq(struct ibv_cq *cq, int cqe)
{
    (void)cq;
    (void)cqe;
    return sib_err(EOPNOTSUPP);
}

void sib_cqe_init(struct sib_cqe *e, uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
                  uint32_t qpn)
{
    memset(e, 0, sizeof(*e));
    e->wc.wr_id = wr_id;
    e->wc.status = st;
    e->wc.opcode = op;
    e->wc.qp_num = qpn;
}

bool sib_cq_push(uint32_t cq_slot, const struct sib_cqe *cqe, bool solicited)
{
    struct sib_fcq *c = sib_fcq_at(&sib_fab, cq_slot);
    struct sib_addr wake = {0};
    struct sib_cqe *ring;
    bool first_overrun = false;

    sib_lock(&c->lock);
    if (!c->in_use) {
        sib_unlock(&c->lock);
        return true; /* destroyed (or its owner died): nobody to tell */
    }
    if (c->tail - c->head >= c->cap) {
        first_overrun = !c->overrun;
        c->overrun = 1;
        sib_unlock(&c->lock);
        SIB_COUNT(sib_fctx_at(&sib_fab, c->owner), cq_overruns, 1);
        if (first_overrun)
            sib_async_post(c->owner, IBV_EVENT_CQ_ERR, SIB_K_CQ, cq_slot, c->gen);
        return false;
    }
    ring = sib_ptr(&sib_fab, c->ring);
    ring[c->tail % c->cap] = *cqe;
    __atomic_store_n(&c->tail, c->tail + 1, __ATOMIC_RELEASE);
    if (c->armed == 1 || (c->armed == 2 && (solicited || cqe->wc.status != IBV_WC_SUCCESS))) {
        c->armed = 0;
        __atomic_store_n(&c->ev_pending, 1, __ATOMIC_RELEASE);
        wake = c->chan;
    }
    sib_unlock(&c->lock);
    sib_sock_wake(&wake);
    return true;
}

/* A polled send completion frees its WQE's send-queue slot and those of the unsignaled
 * WQEs before it (post.c counts them against max_send_wr). */
static void retire_send(uint32_t qp_slot, uint32_t qpn, uint64_t seq)
{
    struct sib_fqp *f = sib_fqp_at(&sib_fab, qp_slot);

    if (__atomic_load_n(&f->qpn, __ATOMIC_ACQUIRE) == qpn)
        __atomic_store_n(&f->sq_retired, seq + 1, __ATOMIC_RELEASE);
}

int sib_cq_poll(struct sib_cq *cq, int n, struct ibv_wc *wc)
{
    struct sib_fcq *f = cq->f;
    struct sib_cqe *ring;
    int k = 0;

    if (__atomic_load_n(&f->tail, __ATOMIC_ACQUIRE) == f->head)
        return 0;
    sib_lock(&f->lock);
    ring = sib_ptr(&sib_fab, f->ring);
    while (k < n && f->head != f->tail) {
        const struct sib_cqe *e = &ring[f->head % f->cap];

        wc[k++] = e->wc;
        if (e->is_send)
            retire_send(e->qp_slot, e->wc.qp_num, e->seq);
        f->head++;
    }
    sib_unlock(&f->lock);
    return k;
}

int sib_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
    struct sib_cq *cq = sib_cq(ibcq);

    if (!cq)
        return sib_err(EINVAL);
    sib_lock(&cq->f->lock);
    cq->f->armed = solicited_only ? 2 : 1;
    sib_unlock(&cq->f->lock);
    return 0;
}
