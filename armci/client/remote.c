/*
 * Operations towards other nodes (remote.h): put and get by RDMA straight
 * between registered memory and the target's segment, through pipelined
 * bounce buffers for unregistered memory; accumulate, Rmw and locks as
 * requests to the target node's data server.
 */
#include "../remote.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "../acc.h"
#include "../config.h"
#include "../dataserver/protocol.h"
#include "../error.h"
#include "../mutex.h"
#include "../net.h"
#include "../odcm/cm.h"
#include "../progress.h"
#include "../runtime.h"
#include "../thread_check.h"
#include "../topology.h"
#include "../util.h"
#include "client.h"

/* Largest single RDMA: well under every device's max_msg_sz (2 GiB on most). */
#define MAX_RDMA_CHUNK ((size_t)1 << 30)

/* Posts one RDMA per chunk of [local, local + bytes) to [raddr, ...). */
static void rdma_direct(struct conn *c, enum ibv_wr_opcode op, void *local, uint32_t lkey,
                        size_t bytes, const struct target *t, struct request *req)
{
    for (size_t off = 0; off < bytes; off += MAX_RDMA_CHUNK) {
        size_t n = MIN(MAX_RDMA_CHUNK, bytes - off);
        struct inflight *f = inflight_new(op == IBV_WR_RDMA_WRITE ? INF_WRITE : INF_READ, c, req);
        post_rdma(c, op, (char *)local + off, lkey, n, t->server_addr + off, t->rkey, f);
    }
}

/*
 * Non-blocking operations towards a node whose connection is still being
 * set up wait here, in issue order, so that the caller does not: a client
 * talking to many new nodes sets all their connections up at once.
 */
enum pending_kind { PENDING_PUT, PENDING_GET, PENDING_ACC };

struct pending_op {
    enum pending_kind kind;
    struct target t;
    const void *src;
    void *dst;
    size_t bytes;
    int datatype;
    uint8_t scale[16];
    struct request *req;
    struct pending_op *next;
};

/* True if the operation was queued (the connection is not ready, or others wait before it). */
static bool queue_if_connecting(struct conn *c, enum pending_kind kind, const struct target *t,
                                const void *src, void *dst, size_t bytes, int datatype,
                                const void *scale, struct request *req, bool blocking)
{
    if (blocking)
        return false; /* conn_wait_ready waits, draining the queue first */
    if (c->state == CONN_READY && !c->queue_head)
        return false;
    struct pending_op *op = xcalloc(1, sizeof(*op));
    *op = (struct pending_op){.kind = kind,
                              .t = *t,
                              .src = src,
                              .dst = dst,
                              .bytes = bytes,
                              .datatype = datatype,
                              .req = req};
    if (scale)
        memcpy(op->scale, scale, acc_elem_size(datatype));
    if (c->queue_tail)
        c->queue_tail->next = op;
    else
        c->queue_head = op;
    c->queue_tail = op;
    /* Counted now, so fences and waits see it. */
    c->outstanding++;
    ep.outstanding++;
    req_op_started(req);
    return true;
}

/* Posts the operations that queued on c while it was being set up, in order. */
static void drain(struct conn *c)
{
    struct pending_op *op = c->queue_head;
    c->queue_head = c->queue_tail = NULL;
    while (op) {
        struct pending_op *next = op->next;
        if (op->kind == PENDING_PUT)
            remote_put(&op->t, op->src, op->bytes, op->req, false);
        else if (op->kind == PENDING_GET)
            remote_get(&op->t, op->dst, op->bytes, op->req, false);
        else
            remote_acc(&op->t, op->datatype, op->scale, op->src, op->bytes, op->req, false);
        /* The real operation counts itself; drop the placeholder. */
        c->outstanding--;
        ep.outstanding--;
        req_op_done(op->req);
        free(op);
        op = next;
    }
}

/* Connections that became ready with operations queued on them. */
static struct conn **to_drain;
static int nto_drain, capto_drain;

void conn_on_ready(struct conn *c)
{
    if (!c->queue_head)
        return;
    if (nto_drain == capto_drain) {
        capto_drain = capto_drain ? 2 * capto_drain : 8;
        to_drain = xrealloc(to_drain, sizeof(*to_drain) * capto_drain);
    }
    to_drain[nto_drain++] = c;
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

void conns_fini(void)
{
    free(to_drain);
    to_drain = NULL;
    nto_drain = capto_drain = 0;
}

struct conn *conn_wait_ready(struct conn *c)
{
    if (c->state == CONN_READY && !c->queue_head)
        return c;
    /* Operations queued while connecting go first: FIFO. */
    while (c->state != CONN_READY)
        progress_wait();
    drain(c);
    return c;
}

struct conn *conn_get(int node)
{
    return conn_wait_ready(cm_conn_start(node));
}

static void put_now(const struct target *t, const void *src, size_t bytes, struct request *req,
                    bool blocking)
{
    /* One table lookup: queue on a connection still being set up, else post on it. */
    struct conn *c = cm_conn_start(t->node);
    if (queue_if_connecting(c, PENDING_PUT, t, src, NULL, bytes, 0, NULL, req, blocking))
        return;
    conn_wait_ready(c);
    void *s = (void *)src;
    uint32_t lkey = 0;
    bool inline_ok = bytes <= c->max_inline;
    /* A blocking put of up to one bounce is faster copied than waited for. */
    bool copy_is_cheaper = blocking && bytes <= cfg.bounce_size;
    if (inline_ok || (!copy_is_cheaper && seg_local_lkey(src, bytes, &lkey))) {
        struct request done = {0};
        struct request *r = blocking && !inline_ok ? &done : req;
        rdma_direct(c, IBV_WR_RDMA_WRITE, s, lkey, bytes, t, r);
        if (r == &done)
            req_wait(&done); /* zero-copy: src is the NIC's until the write completes */
        return;
    }
    /* Pipeline: copying chunk k+1 overlaps the write of chunk k. */
    for (size_t off = 0; off < bytes; off += cfg.bounce_size) {
        size_t n = MIN(cfg.bounce_size, bytes - off);
        struct bounce *b = bounce_get();
        memcpy(b->buf, (const char *)src + off, n);
        struct inflight *f = inflight_new(INF_WRITE, c, req);
        f->bounce = b;
        post_rdma(c, IBV_WR_RDMA_WRITE, b->buf, b->lkey, n, t->server_addr + off, t->rkey, f);
    }
}

static void get_now(const struct target *t, void *dst, size_t bytes, struct request *req,
                    bool blocking)
{
    /* One table lookup: queue on a connection still being set up, else post on it. */
    struct conn *c = cm_conn_start(t->node);
    if (queue_if_connecting(c, PENDING_GET, t, NULL, dst, bytes, 0, NULL, req, blocking))
        return;
    conn_wait_ready(c);
    struct request done = {0};
    struct request *r = blocking ? &done : req;
    uint32_t lkey;
    if (seg_local_lkey(dst, bytes, &lkey)) {
        rdma_direct(c, IBV_WR_RDMA_READ, dst, lkey, bytes, t, r);
    } else {
        for (size_t off = 0; off < bytes; off += cfg.bounce_size) {
            size_t n = MIN(cfg.bounce_size, bytes - off);
            struct bounce *b = bounce_get();
            struct inflight *f = inflight_new(INF_READ, c, r);
            f->bounce = b;
            f->copy_to = (char *)dst + off;
            f->copy_len = n;
            post_rdma(c, IBV_WR_RDMA_READ, b->buf, b->lkey, n, t->server_addr + off, t->rkey, f);
        }
    }
    if (blocking)
        req_wait(&done);
}

/* Largest accumulate payload per request, a whole number of elements. */
static size_t acc_chunk(size_t elem)
{
    size_t room = MIN(cfg.server_buf_size, cfg.bounce_size) - sizeof(struct ds_request);
    return room / elem * elem;
}

static void acc_now(const struct target *t, int datatype, const void *scale, const void *src,
                    size_t bytes, struct request *req, bool blocking)
{
    /* One table lookup: queue on a connection still being set up, else post on it. */
    struct conn *c = cm_conn_start(t->node);
    if (queue_if_connecting(c, PENDING_ACC, t, src, NULL, bytes, datatype, scale, req, blocking))
        return;
    conn_wait_ready(c);
    size_t elem = acc_elem_size(datatype);
    size_t chunk = acc_chunk(elem);
    /* The payload is copied into the request, so src is reusable at once either way. */
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = MIN(chunk, bytes - off);
        struct bounce *b;
        struct ds_request *rq = request_begin(c, DS_ACC, t, off, n, &b);
        rq->datatype = (uint8_t)datatype;
        memcpy(rq->scale, scale, elem);
        memcpy(rq + 1, (const char *)src + off, n);
        request_send(c, rq, b, n, inflight_new(INF_REQUEST, c, req), "accumulate");
    }
}

/* The transport's entry points: each is checked against concurrent threads (thread_check.h). */
void remote_put(const struct target *t, const void *src, size_t bytes, struct request *req,
                bool blocking)
{
    thread_check_enter();
    put_now(t, src, bytes, req, blocking);
    thread_check_leave();
}

void remote_get(const struct target *t, void *dst, size_t bytes, struct request *req, bool blocking)
{
    thread_check_enter();
    get_now(t, dst, bytes, req, blocking);
    thread_check_leave();
}

void remote_acc(const struct target *t, int datatype, const void *scale, const void *src,
                size_t bytes, struct request *req, bool blocking)
{
    thread_check_enter();
    acc_now(t, datatype, scale, src, bytes, req, blocking);
    thread_check_leave();
}

/* Sends one payload-free request and waits for its reply; returns the reply's value. */
static int64_t request_and_wait(const struct target *t, enum ds_op op, uint64_t len, int rmw_op,
                                int64_t value, const char *what)
{
    thread_check_enter();
    struct conn *c = conn_get(t->node);
    struct bounce *b;
    struct ds_request *rq = request_begin(c, op, t, 0, len, &b);
    rq->rmw_op = (uint8_t)rmw_op;
    rq->value = value;
    struct request done = {0};
    int64_t result = 0;
    struct inflight *f = inflight_new(INF_REQUEST, c, &done);
    f->result = &result;
    request_send(c, rq, b, 0, f, what);
    req_wait(&done);
    thread_check_leave();
    return result;
}

long remote_rmw(const struct target *t, int op, long value)
{
    size_t size = (op == ARMCI_FETCH_AND_ADD || op == ARMCI_SWAP) ? sizeof(int) : sizeof(long);
    return (long)request_and_wait(t, DS_RMW, size, op, value, "read-modify-write");
}

void remote_lock(const struct target *t)
{
    request_and_wait(t, DS_LOCK, sizeof(struct ticket_lock), 0, 0, "lock");
}

void remote_unlock(const struct target *t)
{
    /* Writes issued before on this connection land first (RC order); no need to wait. */
    thread_check_enter();
    struct conn *c = conn_get(t->node);
    struct bounce *b;
    struct ds_request *rq = request_begin(c, DS_UNLOCK, t, 0, sizeof(struct ticket_lock), &b);
    request_send(c, rq, b, 0, inflight_new(INF_REQUEST, c, req_implicit()), "unlock");
    thread_check_leave();
}

void remote_fence(int node)
{
    thread_check_enter();
    struct conn *c = cm_conn_if_exists(node);
    while (c && c->outstanding > 0)
        progress_wait();
    thread_check_leave();
}

void remote_fence_all(void)
{
    thread_check_enter();
    while (ep.outstanding > 0)
        progress_wait();
    thread_check_leave();
}
