/*
 * The data-server path (server_path.h): pieces packed into requests the
 * target node's data server scatters, gathers (and writes back by RDMA),
 * pulls by RDMA read, or accumulates.
 */
#include "transport/server_path.h"

#include <string.h>

#include "core/acc.h"
#include "core/config.h"
#include "core/mutant.h"
#include "core/util.h"
#include "wire/protocol.h"
#include "odcm/conn.h"
#include "transport/progress.h"
#include "transport/requests.h"
#include "transport/pieces.h"
#include "transport/replay_log.h"
#include "transport/route.h"
#include "verbs/memory.h"
#include "verbs/rc_qp.h"

/* The server's side of a piece: its counts with the remote strides. */
static void server_layout(struct ds_stride *s, const struct stride_piece *p, const int *strides)
{
    memset(s, 0, sizeof(*s));
    s->levels = p->levels;
    for (int i = 0; i <= p->levels; i++)
        s->count[i] = p->count[i];
    for (int i = 0; i < p->levels; i++)
        s->stride[i] = strides[i];
}

/* The gather list of a piece: one entry per chunk of it in local memory. */
static int piece_gather(const struct stride_piece *p, const int *strides, const char *base,
                        uint32_t lkey, struct ibv_sge *sge)
{
    int packed[ARMCI_MAX_STRIDE_LEVEL];
    stride_packed(p->count, p->levels, packed);
    struct stride_desc walk = {p->levels, p->count, strides, packed};
    struct stride_iter it;
    int n = 0;
    for (stride_iter_begin(&it, &walk); !it.done; stride_iter_next(&it))
        sge[n++] = (struct ibv_sge){
            .addr = (uintptr_t)(base + it.src_off), .length = (uint32_t)p->count[0], .lkey = lkey};
    return n;
}

/* A piece to copy into its request, behind the header (fill_packed). */
struct packing {
    const struct stride_piece *p;
    const int *strides;
    const char *from;
};

static void fill_packed(void *to, const void *ctx)
{
    const struct packing *k = ctx;
    pack_piece(k->p, k->strides, k->from, to, true);
}

/*
 * Puts and accumulates: each piece becomes a request the server scatters or
 * applies. When the user's memory is registered (and rows are not tiny),
 * nothing is copied here: the request's SEND gathers the header and the
 * piece's rows in place, and they belong to the operation until that SEND
 * completes (counted in `sent`, if given: a blocking caller waits there,
 * not for the server's answers). Otherwise each piece is packed into the
 * request's buffer, and a non-blocking caller's requests may share their
 * SEND with the updates that follow (requests.h, request_desc.defer).
 */
static void send_packed(struct conn *c, const struct transfer *x, const struct server_plan *pl,
                        struct handle *req, struct handle *sent, bool blocking)
{
    bool acc = x->op == TRANSFER_ACC;
    size_t unit = acc ? acc_elem_size(x->datatype) : 1;
    struct piece_walk w;
    struct stride_piece p;
    piece_walk_begin(&w, x, pl->max_bytes, unit);
    while (piece_walk_next(&w, &p)) {
        struct request_desc r = {.msg = {.op = acc ? DS_ACC_PACKED : DS_PUT_PACKED, .len = p.bytes},
                                 .t = &x->remote,
                                 .offset = p.dst_off,
                                 .defer = !blocking,
                                 .req = req,
                                 .what = acc ? "accumulate" : "strided put"};
        server_layout(&r.msg.stride, &p, remote_strides(x));
        if (acc) {
            r.msg.datatype = (uint8_t)x->datatype;
            memcpy(r.msg.scale, x->scale, unit);
        }
        const char *from = x->local + p.src_off;
        struct ibv_sge sge[RC_QP_MAX_SGE];
        struct packing copy = {&p, local_strides(x), from};
        if (pl->in_place && p.bytes > pl->send_room) {
            r.pull_from = from; /* one run (plan_server): the server reads it in place */
            r.pull_rkey = pl->rkey;
        } else if (pl->in_place) {
            r.ngather = piece_gather(&p, local_strides(x), from, pl->lkey, sge);
            r.gather = sge;
            r.sent = sent;
        } else {
            r.payload = p.bytes;
            r.fill = fill_packed;
            r.fill_ctx = &copy;
        }
        request_post(c, &r);
    }
}

void via_server_get(struct conn *c, const struct transfer *x, size_t piece_bytes, bool direct,
                    uint32_t rkey, struct handle *req)
{
    struct piece_walk w;
    struct stride_piece p;
    piece_walk_begin(&w, x, piece_bytes, 1);
    while (piece_walk_next(&w, &p)) {
        struct request_desc r = {.msg = {.op = DS_GET_PACKED, .len = p.bytes},
                                 .t = &x->remote,
                                 .offset = p.dst_off,
                                 .req = req,
                                 .what = "strided get"};
        server_layout(&r.msg.stride, &p, remote_strides(x));
        if (direct) {
            r.msg.reply_addr = (uintptr_t)(x->local + p.src_off);
            r.msg.reply_rkey = rkey;
        } else {
            r.reply_to_bounce = true;
            r.on_done = unpack_on_arrival;
            r.ctx = unpack_ctx_new(&p, local_strides(x), x->local + p.src_off);
        }
        request_post(c, &r);
    }
}

void via_server_pull(struct conn *c, const struct transfer *x, size_t piece_bytes, uint32_t rkey,
                     struct handle *req, bool blocking)
{
    struct handle done = {0};
    struct piece_walk w;
    struct stride_piece p;
    piece_walk_begin(&w, x, piece_bytes, 1);
    while (piece_walk_next(&w, &p)) {
        struct request_desc r = {.msg = {.op = DS_PUT_PULL,
                                         .len = p.bytes,
                                         .reply_addr = (uintptr_t)(x->local + p.src_off),
                                         .reply_rkey = rkey},
                                 .t = &x->remote,
                                 .offset = p.dst_off,
                                 .req = blocking ? &done : req,
                                 .what = "strided put"};
        server_layout(&r.msg.stride, &p, remote_strides(x));
        request_post(c, &r);
    }
    if (blocking)
        handle_wait(&done);
}

void via_server_put(struct conn *c, const struct transfer *x, const struct server_plan *pl,
                    struct handle *req, bool blocking)
{
    struct handle sent = {0}, answered = {0};
    /* With recovery on, rows sent in place are the request's until it is answered: a SEND the
     * device completed may still have to go again, whole (replay_log.h); rows the server pulls
     * in place are, always. A blocking caller then waits for the answers, not for the SENDs. */
    bool hold = pl->in_place && (replay_log_on() || pl->max_bytes > pl->send_room);
#if ARMCI_MUTANT_IS(in_place_released_at_send)
    hold = false;
#endif
    if (blocking && hold)
        send_packed(c, x, pl, &answered, NULL, blocking);
    else
        send_packed(c, x, pl, req, blocking ? &sent : NULL, blocking);
    if (sent.pending)
        handle_wait(&sent);
    if (answered.pending)
        handle_wait(&answered);
}
