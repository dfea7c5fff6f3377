/*
 * Strided transfers to another node, chosen per operation by the size of
 * the contiguous chunks (count[0]) against ARMCI_STRIDED_THRESHOLD:
 *   - large chunks: one RDMA per chunk, straight from/to the user's buffer
 *     (zero-copy when registered), pipelined under the send-queue limits;
 *   - small chunks: packed into requests, each a strided box the data
 *     server scatters (put) or gathers and RDMA-writes back (get).
 * Accumulates always execute at the data server, packed, under the
 * target's accumulate lock, so they stay atomic per element.
 */
#include "strided_remote.h"

#include <stdlib.h>
#include <string.h>

#include "../acc.h"
#include "../client/client.h"
#include "../config.h"
#include "../dataserver/protocol.h"
#include "../odcm/cm.h"
#include "../remote.h"
#include "../util.h"
#include "../thread_check.h"

/* Room for packed data in one request to the data server. */
static size_t request_room(void)
{
    return MIN(cfg.server_buf_size, cfg.bounce_size) - sizeof(struct ds_request);
}

static bool use_packing(const struct stride_desc *d, size_t room)
{
    size_t chunk = (size_t)d->count[0];
    return chunk < cfg.strided_threshold && chunk <= room;
}

static struct target offset_target(const struct target *t, size_t offset)
{
    struct target c = *t;
    c.server_addr += offset;
    return c;
}

/* Chunks larger than a bounce buffer: each is a contiguous put of its own. */
static void chunk_by_chunk_put(const struct target *t, const struct stride_desc *d, const char *src,
                               struct request *req, bool blocking)
{
    struct stride_iter it;
    for (stride_iter_begin(&it, d); !it.done; stride_iter_next(&it)) {
        struct target c = offset_target(t, it.dst_off);
        remote_put(&c, src + it.src_off, (size_t)d->count[0], req, blocking);
    }
}

/* The server side of a piece: its counts with the remote strides. */
static void server_layout(struct ds_stride *s, const struct stride_piece *p, const int *strides)
{
    memset(s, 0, sizeof(*s));
    s->levels = p->levels;
    for (int i = 0; i <= p->levels; i++)
        s->count[i] = p->count[i];
    for (int i = 0; i < p->levels; i++)
        s->stride[i] = strides[i];
}

/* Copies a piece between user memory (with `strides`) and its packed image. */
static void pack_piece(const struct stride_piece *p, const int *strides, const char *from, char *to,
                       bool packing)
{
    int packed[ARMCI_MAX_STRIDE_LEVEL];
    stride_packed(p->count, p->levels, packed);
    struct stride_desc d = {p->levels, p->count, packing ? strides : packed,
                            packing ? packed : strides};
    stride_copy(&d, from, to);
}

/* Sends the pieces of a put or accumulate, packed, to the data server. */
static void send_packed(const struct target *t, const struct stride_desc *d, const char *src,
                        int op, int datatype, const void *scale, struct request *req)
{
    struct conn *c = conn_get(t->node);
    struct stride_pieces it;
    struct stride_piece p;
    stride_pieces_begin(&it, d, request_room());
    while (stride_pieces_next(&it, &p)) {
        struct bounce *b;
        struct ds_request *rq = request_begin(c, op, t, p.dst_off, p.bytes, &b);
        server_layout(&rq->stride, &p, d->dst_stride);
        if (op == DS_ACC_PACKED) {
            rq->datatype = (uint8_t)datatype;
            memcpy(rq->scale, scale, acc_elem_size(datatype));
        }
        pack_piece(&p, d->src_stride, src + p.src_off, (char *)(rq + 1), true);
        request_send(c, rq, b, p.bytes, inflight_new(INF_REQUEST, c, req),
                     op == DS_ACC_PACKED ? "strided accumulate" : "strided put");
    }
}

/* Where a packed get piece goes when its data has arrived. */
struct unpack_ctx {
    struct stride_piece piece;
    int strides[ARMCI_MAX_STRIDE_LEVEL];
    char *dst;
};

static struct unpack_ctx *unpack_ctx_new(const struct stride_piece *p, const int *strides,
                                         char *dst)
{
    struct unpack_ctx *u = xmalloc(sizeof(*u));
    u->piece = *p;
    memcpy(u->strides, strides, sizeof(int) * (size_t)p->levels);
    u->dst = dst;
    return u;
}

static void unpack_on_arrival(struct inflight *f)
{
    struct unpack_ctx *u = f->ctx;
    pack_piece(&u->piece, u->strides, f->data->buf, u->dst, false);
    free(u);
}

/*
 * The RDMA path: one RDMA write (put) or read (get) per chunk, posted as
 * chains. Local memory is used in place when it is registered (and, for a
 * blocking put, when we may keep it: never). Otherwise each piece of up to
 * one bounce buffer goes through a bounce buffer: packed before the writes,
 * or unpacked when the last read of the piece completes; the piece's last
 * operation releases the buffer (a QP completes its operations in order).
 */
static void rdma_strided(const struct target *t, const struct stride_desc *d, char *local,
                         bool write, struct request *req, bool blocking)
{
    struct conn *c = conn_get(t->node);
    enum ibv_wr_opcode op = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    enum inflight_kind kind = write ? INF_WRITE : INF_READ;
    const int *local_stride = write ? d->src_stride : d->dst_stride;
    const int *remote_stride = write ? d->dst_stride : d->src_stride;
    struct rdma_batch batch;
    rdma_batch_init(&batch);
    uint32_t lkey;
    bool in_place = !(write && blocking) &&
                    seg_local_lkey(local, stride_extent(local_stride, d->count, d->levels), &lkey);
    if (in_place) {
        struct stride_desc walk = {d->levels, d->count, local_stride, remote_stride};
        struct stride_iter it;
        for (stride_iter_begin(&it, &walk); !it.done; stride_iter_next(&it))
            rdma_batch_add(&batch, c, op, local + it.src_off, lkey, (size_t)d->count[0],
                           t->server_addr + it.dst_off, t->rkey, inflight_new(kind, c, req));
        rdma_batch_flush(&batch);
        return;
    }
    struct stride_pieces pieces;
    struct stride_piece p;
    struct stride_desc by_side = {d->levels, d->count, local_stride, remote_stride};
    stride_pieces_begin(&pieces, &by_side, cfg.bounce_size);
    while (stride_pieces_next(&pieces, &p)) {
        rdma_batch_flush(&batch); /* bounce_get may wait for earlier operations */
        struct bounce *b = bounce_get();
        if (write)
            pack_piece(&p, local_stride, local + p.src_off, b->buf, true);
        int packed[ARMCI_MAX_STRIDE_LEVEL];
        stride_packed(p.count, p.levels, packed);
        struct stride_desc walk = {p.levels, p.count, packed, remote_stride};
        struct stride_iter it;
        struct inflight *last = NULL;
        for (stride_iter_begin(&it, &walk); !it.done; stride_iter_next(&it)) {
            last = inflight_new(kind, c, req);
            rdma_batch_add(&batch, c, op, (char *)b->buf + it.src_off, b->lkey, (size_t)p.count[0],
                           t->server_addr + p.dst_off + it.dst_off, t->rkey, last);
        }
        if (write) {
            last->bounce = b;
        } else {
            last->data = b;
            last->on_done = unpack_on_arrival;
            last->ctx = unpack_ctx_new(&p, local_stride, local + p.src_off);
        }
    }
    rdma_batch_flush(&batch);
}

void strided_remote_put(const struct target *t, const struct stride_desc *d, const char *src,
                        struct request *req, bool blocking)
{
    thread_check_enter();
    if (use_packing(d, request_room()))
        send_packed(t, d, src, DS_PUT_PACKED, 0, NULL, req); /* copied: src is free at once */
    else if ((size_t)d->count[0] <= cfg.bounce_size)
        rdma_strided(t, d, (char *)src, true, req, blocking);
    else
        chunk_by_chunk_put(t, d, src, req, blocking);
    thread_check_leave();
}

/* Packed path of a get: the data server gathers each piece and RDMA-writes it back. */
static void packed_get(const struct target *t, const struct stride_desc *d, char *dst,
                       struct request *req, size_t room)
{
    struct conn *c = conn_get(t->node);
    struct stride_pieces it;
    struct stride_piece p;
    stride_pieces_begin(&it, d, room);
    while (stride_pieces_next(&it, &p)) {
        struct bounce *data = bounce_get();
        struct bounce *b;
        struct ds_request *rq = request_begin(c, DS_GET_PACKED, t, p.src_off, p.bytes, &b);
        server_layout(&rq->stride, &p, d->src_stride);
        rq->reply_addr = (uintptr_t)data->buf;
        rq->reply_rkey = data->rkey;
        struct inflight *f = inflight_new(INF_REQUEST, c, req);
        f->data = data;
        f->on_done = unpack_on_arrival;
        f->ctx = unpack_ctx_new(&p, d->dst_stride, dst + p.dst_off);
        request_send(c, rq, b, 0, f, "strided get");
    }
}

void strided_remote_get(const struct target *t, const struct stride_desc *d, char *dst,
                        struct request *req, bool blocking)
{
    thread_check_enter();
    /* The packed image travels back by RDMA into a bounce buffer: at most one bounce. */
    size_t room = MIN(cfg.bounce_size, request_room());
    struct request done = {0};
    struct request *r = blocking ? &done : req;
    if (use_packing(d, room)) {
        packed_get(t, d, dst, r, room);
    } else if ((size_t)d->count[0] <= cfg.bounce_size) {
        rdma_strided(t, d, dst, false, r, false);
    } else {
        struct stride_iter it;
        for (stride_iter_begin(&it, d); !it.done; stride_iter_next(&it)) {
            struct target c = offset_target(t, it.src_off);
            remote_get(&c, dst + it.dst_off, (size_t)d->count[0], r, false);
        }
    }
    if (blocking)
        req_wait(&done);
    thread_check_leave();
}

void strided_remote_acc(const struct target *t, const struct stride_desc *d, int datatype,
                        const void *scale, const char *src, struct request *req, bool blocking)
{
    thread_check_enter();
    if ((size_t)d->count[0] <= request_room()) {
        send_packed(t, d, src, DS_ACC_PACKED, datatype, scale, req);
    } else {
        /* Chunks larger than a request: each is a contiguous accumulate of its own. */
        struct stride_iter it;
        for (stride_iter_begin(&it, d); !it.done; stride_iter_next(&it)) {
            struct target c = offset_target(t, it.dst_off);
            remote_acc(&c, datatype, scale, src + it.src_off, (size_t)d->count[0], req, blocking);
        }
    }
    thread_check_leave();
}
