#include "verbs/endpoint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memstat.h"
#include "core/threads.h"
#include "verbs/memory.h"
#include "core/util.h"
#include "verbs/device.h"

#define POLL_BATCH 32
/* Acknowledging CQ events takes a lock in the provider: do it in batches. */
#define ACK_BATCH 64
/* Failed receives warned about per pool; the rest are only counted. */
#define RECV_FAIL_WARNINGS 8

static void unhandled(void *ctx, const struct ibv_wc *wc)
{
    const struct endpoint *e = ctx;
    armci_die(NULL, "%s: completion with unexpected wr_id 0x%llx (tag %d, status %s)", e->who,
              (unsigned long long)wc->wr_id, (int)wr_id_tag(wc->wr_id),
              ibv_wc_status_str(wc->status));
}

void endpoint_create(struct endpoint *e, const char *who, int cqe, bool with_channel)
{
    *e = (struct endpoint){.who = who};
    for (int t = 0; t < ENDPOINT_TAGS; t++)
        e->on[t].fn = unhandled, e->on[t].ctx = e;
    if (with_channel) {
        e->channel = ibv_create_comp_channel(vdev.ctx);
        if (!e->channel)
            armci_die("ARMCI_Init", "ibv_create_comp_channel (%s) failed: %s", who,
                      strerror(errno));
        set_nonblocking(e->channel->fd, who);
    }
    e->cq = ibv_create_cq(vdev.ctx, cqe, NULL, e->channel, 0);
    if (!e->cq)
        armci_die("ARMCI_Init", "ibv_create_cq (%s, %d entries) failed: %s", who, cqe,
                  strerror(errno));
    /* The owner sized the CQ for everything it can have outstanding: less would overrun. */
    if (e->cq->cqe < cqe)
        armci_die("ARMCI_Init", "ibv_create_cq (%s) gave %d entries, %d needed", who, e->cq->cqe,
                  cqe);
}

void endpoint_destroy(struct endpoint *e)
{
    if (!e->cq)
        return;
    if (e->events_unacked)
        ibv_ack_cq_events(e->cq, e->events_unacked);
    verbs_destroy_cq(e->cq, e->who);
    verbs_destroy_channel(e->channel, e->who);
    *e = (struct endpoint){0};
}

void endpoint_on(struct endpoint *e, enum wr_tag tag, completion_fn fn, void *ctx)
{
    e->on[tag].fn = fn;
    e->on[tag].ctx = ctx;
}

int endpoint_poll(struct endpoint *e)
{
    struct ibv_wc wc[POLL_BATCH];
    int n = ibv_poll_cq(e->cq, POLL_BATCH, wc);
    if (n < 0)
        armci_die(NULL, "ibv_poll_cq (%s) failed: %d", e->who, n);
    for (int i = 0; i < n; i++) {
        enum wr_tag tag = wr_id_tag(wc[i].wr_id);
        e->on[tag].fn(e->on[tag].ctx, &wc[i]);
    }
    return n;
}

/* Consumes the channel's event, if there is one (the channel is non-blocking). */
static void take_event(struct endpoint *e)
{
    struct ibv_cq *cq;
    void *ctx;
    if (ibv_get_cq_event(e->channel, &cq, &ctx)) {
        if (errno != EAGAIN)
            armci_die(NULL, "ibv_get_cq_event (%s) failed: %s", e->who, strerror(errno));
        return;
    }
    if (++e->events_unacked >= ACK_BATCH) {
        ibv_ack_cq_events(e->cq, e->events_unacked);
        e->events_unacked = 0;
    }
}

int endpoint_wait(struct endpoint *e, int timeout_ms, struct pollfd *extra, int nextra)
{
    int rc = ibv_req_notify_cq(e->cq, 0);
    if (rc)
        armci_die(NULL, "ibv_req_notify_cq (%s) failed: %s", e->who, strerror(rc));
    int n = endpoint_poll(e);
    if (n)
        return n;
    struct pollfd fds[1 + nextra];
    fds[0] = (struct pollfd){.fd = e->channel->fd, .events = POLLIN};
    for (int i = 0; i < nextra; i++)
        fds[1 + i] = extra[i];
    unsigned held = rt_lock_suspend(); /* other threads may work while this one sleeps */
    int ready = poll(fds, (nfds_t)(1 + nextra), timeout_ms);
    rt_lock_resume(held);
    if (ready <= 0) {
        for (int i = 0; i < nextra; i++)
            extra[i].revents = 0;
        return 0;
    }
    if (fds[0].revents & POLLIN)
        take_event(e);
    for (int i = 0; i < nextra; i++)
        extra[i].revents = fds[1 + i].revents;
    return 0;
}

struct pollfd endpoint_arm(struct endpoint *e)
{
    int rc = ibv_req_notify_cq(e->cq, 0);
    if (rc)
        armci_die(NULL, "ibv_req_notify_cq (%s) failed: %s", e->who, strerror(rc));
    return (struct pollfd){.fd = e->channel->fd, .events = POLLIN};
}

void endpoint_disarm(struct endpoint *e, const struct pollfd *seen)
{
    if (seen->revents & POLLIN)
        take_event(e);
}

/* ---- receive pools ---- */

/* A receive's wr_id: the buffer's index, and the pool's generation above bit 32. */
#define GENERATION_MASK 0x1fffffffu /* what fits in a wr_id above the index and the tag */

static void *buffer_at(const struct recv_pool *p, int index)
{
    return p->chunks[index / p->chunk].bufs + (size_t)(index % p->chunk) * p->buf_size;
}

static int index_of(const struct ibv_wc *wc)
{
    return (int)(uint32_t)wr_id_index(wc->wr_id);
}

static uint32_t generation_of(const struct ibv_wc *wc)
{
    return (uint32_t)(wr_id_index(wc->wr_id) >> 32);
}

static void post_one(struct recv_pool *p, int index)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buffer_at(p, index),
                          .length = (uint32_t)p->buf_size,
                          .lkey = p->chunks[index / p->chunk].mr->lkey};
    uint64_t id = (uint64_t)p->generation << 32 | (uint32_t)index;
    struct ibv_recv_wr wr = {.wr_id = wr_id_make(id, p->tag), .sg_list = &sge, .num_sge = 1};
    struct ibv_recv_wr *bad;
    int rc = p->srq ? ibv_post_srq_recv(p->srq, &wr, &bad) : ibv_post_recv(p->qp, &wr, &bad);
    if (rc)
        armci_die(NULL, "%s (%s) failed: %s", p->srq ? "ibv_post_srq_recv" : "ibv_post_recv",
                  p->what, strerror(rc));
}

/*
 * Every receive completion of the pool: the owner sees the good ones; all are
 * reposted, failed ones as the owner's on_failure says if it has one (the UD
 * channel resets its QP and posts every buffer again). A failed receive can be
 * caused from outside (a datagram longer than the buffer): the first few are
 * warned about, the rest only counted.
 */
static void on_receive(void *ctx, const struct ibv_wc *wc)
{
    struct recv_pool *p = ctx;
    if (generation_of(wc) != p->generation)
        return; /* posted before the QP was reset: its buffer is posted again already */
    if (wc->status == IBV_WC_SUCCESS) {
        p->fn(p->ctx, wc);
        post_one(p, index_of(wc));
        return;
    }
    if (wc->status != IBV_WC_WR_FLUSH_ERR && p->failed++ < RECV_FAIL_WARNINGS)
        armci_warn("%s: receive failed: %s%s", p->what, ibv_wc_status_str(wc->status),
                   p->failed == RECV_FAIL_WARNINGS ? " (no more such warnings)" : "");
    /* A flushed QP receive queue is being torn down; an SRQ outlives its QPs. */
    bool repost = p->srq || wc->status != IBV_WC_WR_FLUSH_ERR;
    if (p->on_failure)
        repost = p->on_failure(p->ctx, wc);
    if (repost)
        post_one(p, index_of(wc));
}

static size_t chunk_bytes(const struct recv_pool *p)
{
    return p->buf_size * (size_t)p->chunk;
}

/* The next chunk of buffers, registered (not yet posted); false if it could not be. */
static bool add_chunk(struct recv_pool *p)
{
    struct recv_chunk *k = &p->chunks[p->count / p->chunk];
    k->bufs = xmalloc_registrable(chunk_bytes(p));
    k->mr = net_try_reg(k->bufs, chunk_bytes(p), false);
    if (!k->mr) {
        free(k->bufs);
        k->bufs = NULL;
        return false;
    }
    memstat_add(p->kind, (long)chunk_bytes(p));
    p->count += p->chunk;
    return true;
}

void recv_pool_create(struct recv_pool *p, const char *what, enum mem_kind kind, int count, int max,
                      size_t buf_size, struct ibv_pd *srq_pd, struct endpoint *e, enum wr_tag tag,
                      completion_fn fn, void *ctx)
{
    int nchunks = (max + count - 1) / count;
    *p = (struct recv_pool){.what = what,
                            .kind = kind,
                            .buf_size = buf_size,
                            .max = nchunks * count,
                            .chunk = count,
                            .tag = tag,
                            .fn = fn,
                            .ctx = ctx};
    p->chunks = xcalloc((size_t)nchunks, sizeof(*p->chunks));
    if (!add_chunk(p))
        armci_die("ARMCI_Init", "ibv_reg_mr of %zu bytes (%s) failed: %s", chunk_bytes(p), what,
                  strerror(errno));
    endpoint_on(e, tag, on_receive, p);
    if (!srq_pd)
        return;
    /* Room for every buffer it may grow to: an SRQ's size is fixed when it is made. */
    struct ibv_srq_init_attr attr = {.attr = {.max_wr = (uint32_t)p->max, .max_sge = 1}};
    p->srq = ibv_create_srq(srq_pd, &attr);
    if (!p->srq)
        armci_die("ARMCI_Init", "ibv_create_srq (%s, %d buffers) failed: %s", what, p->max,
                  strerror(errno));
    for (int i = 0; i < count; i++)
        post_one(p, i);
}

void recv_pool_grow(struct recv_pool *p, int want)
{
    while ((p->srq || p->qp) && p->count < want && p->count < p->max) {
        int first = p->count;
        if (!add_chunk(p)) {
            /* Fewer buffers only mean fewer credits to share out: run on with them. */
            armci_warn("%s: ibv_reg_mr of %zu bytes failed (%s): staying at %d buffers", p->what,
                       chunk_bytes(p), strerror(errno), p->count);
            p->max = p->count;
            return;
        }
        for (int i = first; i < p->count; i++)
            post_one(p, i);
    }
}

void recv_pool_attach_qp(struct recv_pool *p, struct ibv_qp *qp)
{
    p->qp = qp;
    for (int i = 0; i < p->count; i++)
        post_one(p, i);
}

void recv_pool_reset(struct recv_pool *p)
{
    p->generation = (p->generation + 1) & GENERATION_MASK;
    for (int i = 0; i < p->count; i++)
        post_one(p, i);
}

void recv_pool_destroy(struct recv_pool *p)
{
    if (!p->chunks)
        return;
    verbs_destroy_srq(p->srq, p->what);
    for (int k = 0; k < p->count / p->chunk; k++) {
        net_dereg(p->chunks[k].mr);
        free(p->chunks[k].bufs);
    }
    memstat_add(p->kind, -(long)(p->buf_size * (size_t)p->count));
    free(p->chunks);
    *p = (struct recv_pool){0};
}

void *recv_pool_buffer(const struct recv_pool *p, const struct ibv_wc *wc)
{
    return buffer_at(p, index_of(wc));
}
