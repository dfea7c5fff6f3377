/*
 * Where transfers enter the transport (entry.h): transfer_start, which
 * waits for the connection or queues on it, and the transport's side of a
 * connection: its state (c->io), pinning, and the operations that wait for
 * it to become ready.
 */
#include "transport/entry.h"

#include <stdlib.h>
#include <string.h>

#include "common/fifo.h"
#include "common/grow.h"
#include "core/acc.h"
#include "core/config.h"
#include "core/hybrid_stats.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/threads.h"
#include "core/util.h"
#include "odcm/cm.h"
#include "odcm/conn_map.h"
#include "transport/dgram.h"
#include "transport/dgram_peers.h"
#include "transport/progress.h"
#include "transport/recovery.h"
#include "transport/route.h"
#include "transport/send_queue.h"
#include "transport/transfer.h"
#include "transport/work.h"

/* A transfer queued on a connection being set up: a deep copy of what it describes. */
struct pending_op {
    struct transfer x;
    int count[ARMCI_MAX_STRIDE_LEVEL + 1];
    int src_stride[ARMCI_MAX_STRIDE_LEVEL];
    int dst_stride[ARMCI_MAX_STRIDE_LEVEL];
    uint8_t scale[16];
    struct handle *req;
    struct pending_op *next;
};

static struct pending_op *pending_copy(const struct transfer *x, struct handle *req)
{
    struct pending_op *op = xcalloc(1, sizeof(*op));
    memstat_add(MEM_WORK, (long)sizeof(*op));
    op->x = *x;
    op->req = req;
    if (x->scale) {
        memcpy(op->scale, x->scale, acc_elem_size(x->datatype));
        op->x.scale = op->scale;
    }
    if (x->locals) {
        size_t n = (size_t)x->n;
        void **locals = xmalloc(sizeof(void *) * n);
        struct target *remotes = xmalloc(sizeof(struct target) * n);
        memcpy(locals, x->locals, sizeof(void *) * n);
        memcpy(remotes, x->remotes, sizeof(struct target) * n);
        op->x.locals = locals;
        op->x.remotes = remotes;
        return op;
    }
    int levels = x->d.levels;
    memcpy(op->count, x->d.count, sizeof(int) * (size_t)(levels + 1));
    if (levels > 0) {
        memcpy(op->src_stride, x->d.src_stride, sizeof(int) * (size_t)levels);
        memcpy(op->dst_stride, x->d.dst_stride, sizeof(int) * (size_t)levels);
    }
    op->x.d = (struct stride_desc){levels, op->count, op->src_stride, op->dst_stride};
    return op;
}

static void pending_free(struct pending_op *op)
{
    if (op->x.locals) {
        free((void *)op->x.locals);
        free((void *)op->x.remotes);
    }
    memstat_add(MEM_WORK, -(long)sizeof(*op));
    free(op);
}

/*
 * True if x was queued (c is not ready, or others wait before it). At most as many operations
 * queue as a ready connection's send queue takes (ARMCI_SEND_WQES) before its issuer waits
 * for completions: past that the caller waits for the connection instead, and posts the queue
 * (conn_wait_ready). Nothing else drives the queue while a thread only issues.
 */
static bool queue_if_connecting(struct conn *c, const struct transfer *x, struct handle *req,
                                bool blocking)
{
    if (blocking)
        return false; /* conn_wait_ready waits, draining the queue first */
    if (c->state == CONN_READY && !c->io->queue_head && !c->io->draining)
        return false;
    if (c->io->queued >= cfg.send_wqes)
        return false;
    struct pending_op *op = pending_copy(x, req);
    FIFO_PUSH(c->io->queue_head, c->io->queue_tail, op, next);
    c->io->queued++;
    works_hold(c, req); /* counted now, so fences and waits see it */
    return true;
}

/*
 * Posts the operations that queued on c while it was being set up, in order,
 * including any queued meanwhile (posting may wait, and other threads go on).
 * One drainer per connection: everyone else queues behind it.
 */
static void drain(struct conn *c)
{
    if (c->io->draining)
        return;
    c->io->draining = true;
    while (c->io->queue_head) {
        struct pending_op *op = c->io->queue_head;
        FIFO_DROP_HEAD(c->io->queue_head, c->io->queue_tail, next);
        c->io->queued--;
        transfer_issue(c, &op->x, op->req, false);
        works_unhold(c, op->req); /* the real operations count themselves */
        pending_free(op);
    }
    c->io->draining = false;
}

/* Connections that became ready with operations queued on them. */
static struct conn **to_drain;
static int nto_drain, capto_drain;

void conn_on_ready(struct conn *c)
{
    if (c->recovering)
        recovery_replay(c); /* its credits are those of the connection it replaces */
    else
        c->io->credits = c->server_credits; /* nothing was sent on it before */
    if (!c->io->queue_head)
        return;
    GROW_FOR_ONE(to_drain, nto_drain, capto_drain, 8, xrealloc);
    to_drain[nto_drain++] = c;
}

void conn_on_broken(struct conn *c)
{
    recovery_start(c, "its data server's end broke", "a notice from the server");
}

void conns_drain_ready(void)
{
    /* Posting may wait and come back here: one drainer at a time. */
    static bool draining;
    if (draining || !nto_drain)
        return;
    draining = true;
    while (nto_drain > 0)
        drain(to_drain[--nto_drain]);
    draining = false;
}

void conn_forget(struct conn *c)
{
    if (!c->io)
        return;
    sq_forget(c);
    recovery_forget(c);
    for (int i = 0; i < nto_drain; i++)
        if (to_drain[i] == c)
            to_drain[i--] = to_drain[--nto_drain];
    memstat_add(MEM_CONNECTIONS, -(long)sizeof(*c->io));
    free(c->io);
    c->io = NULL;
}

void conn_insert(struct conn *c)
{
    c->io = xcalloc(1, sizeof(*c->io));
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*c->io));
}

bool conn_busy(const struct conn *c)
{
    const struct conn_io *io = c->io;
#if ARMCI_MUTANT_IS(cap_closes_busy)
    return io->pinned;
#endif
    return io->pinned || io->outstanding || io->queue_head || io->draining || io->sq_posted ||
           io->sq_dirty || io->posting;
}

/* Operations of ours in flight or queued on c (whether it is pinned or not). */
static bool conn_has_work(const struct conn *c)
{
    const struct conn_io *io = c->io;
    return io->outstanding || io->queue_head || io->draining || io->sq_posted || io->sq_dirty ||
           io->posting;
}

bool conn_waits_for_lock(const struct conn *c)
{
    return c->io->lock_waits > 0;
}

void conns_fini(void)
{
    free(to_drain);
    to_drain = NULL;
    nto_drain = capto_drain = 0;
}

struct conn *conn_wait_ready(struct conn *c)
{
    if (c->state == CONN_READY && !c->io->queue_head && !c->io->draining)
        return c;
    /* Operations queued while connecting go first: FIFO. */
    while (c->state != CONN_READY)
        progress_wait();
    drain(c);
    while (c->io->draining) /* another thread posts the queue: go after it */
        progress_wait();
    return c;
}

/* The connection to node, pinned, maybe not ready: at the connection cap, waits for room. */
static struct conn *conn_pin(int node)
{
    struct conn *c;
    while (!(c = cm_conn_start(node)))
        progress_wait();
    c->io->pinned++;
    return c;
}

void conn_unpin(struct conn *c)
{
    c->io->pinned--;
}

struct conn *conn_get(int node)
{
    return conn_wait_ready(conn_pin(node));
}

struct conn *conn_for_transfer(int node, const struct transfer *x, struct handle *req,
                               bool blocking)
{
    struct conn *c = conn_pin(node);
    if (!queue_if_connecting(c, x, req, blocking))
        return conn_wait_ready(c);
    conn_unpin(c);
    return NULL;
}

/*
 * A node whose small operations earned an RC connection gets one in the background
 * (ARMCI_HYBRID_PROMOTE), if a slot is free: a promotion never closes another node's.
 */
static void promote_maybe(int node, const struct conn *c)
{
    if (c || cfg.hybrid == CFG_HYBRID_UD || !cfg.hybrid_promote ||
        !dgram_count_op(node, cfg.hybrid_promote))
        return;
    if (cfg.max_connections && cm_conn_count() >= cfg.max_connections)
        return;
    if (cm_conn_start(node)) {
        dgram_promoted(node);
        hybrid_stats.promotions++;
    }
}

static bool choose_datagram(int node, const struct transfer *x, bool for_rmw)
{
    if (!cfg.hybrid_on)
        return false;
    struct conn *c = cm_conn_if_exists(node);
    struct dgram_facts f = {.ud_always = cfg.hybrid == CFG_HYBRID_UD,
                            .rc_ready = c && c->state == CONN_READY,
                            .rc_busy = c && conn_has_work(c),
                            .room = dgram_room(x),
                            .segmented_max = cfg.hybrid_segmented};
    if (!route_via_datagram(x, &f)) {
        dgram_fence(node); /* its UD requests first: nothing overtakes them */
        hybrid_stats.rc_ops++;
        return false;
    }
    if (!for_rmw)
        promote_maybe(node, c);
    return true;
}

bool path_is_datagram(int node, const struct transfer *x, bool for_rmw)
{
    bool ud = choose_datagram(node, x, for_rmw);
    conn_map_op(node, ud);
    return ud;
}

void transfer_start(const struct transfer *x, struct handle *req, bool blocking)
{
    if (x->locals && x->n == 0)
        return;
    rt_lock();
    const struct target *t = x->locals ? &x->remotes[0] : &x->remote;
    if (path_is_datagram(t->node, x, false)) {
        dgram_transfer(x, req, blocking);
        rt_unlock();
        return;
    }
    struct conn *c = conn_for_transfer(t->node, x, req, blocking);
    if (c) {
        transfer_issue(c, x, req, blocking);
        conn_unpin(c);
    }
    rt_unlock();
}
