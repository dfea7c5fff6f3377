/*
 * The inter-node data path: every put, get and accumulate towards another
 * node, contiguous (a strided box of 0 levels), strided or vector, enters
 * through transfer_start and shares
 *   - one queue of operations waiting for their connection (non-blocking
 *     operations towards a node being connected queue in issue order, so a
 *     client talking to many new nodes sets their connections up at once);
 *   - one RDMA path: chains of RDMA writes/reads from the user's memory when
 *     it is registered, else through bounce buffers packed or unpacked per
 *     piece (a piece is a strided box of at most one bounce buffer);
 *   - one data-server path: pieces packed into requests the server
 *     scatters, gathers (and writes back by RDMA) or accumulates.
 * Which path a transfer takes depends on the size of its contiguous chunks
 * against ARMCI_STRIDED_THRESHOLD; accumulates always go to the server,
 * which applies them under the target's accumulate lock.
 */
#include <stdlib.h>
#include <string.h>

#include "core/acc.h"
#include "core/mutant.h"
#include "core/config.h"
#include "core/memstat.h"
#include "dataserver/protocol.h"
#include "verbs/memory.h"
#include "odcm/cm.h"
#include "transport/progress.h"
#include "transport/remote.h"
#include "transport/route.h"
#include "transport/send_queue.h"
#include "transport/strided_remote.h"
#include "transport/vector_remote.h"
#include "core/threads.h"
#include "core/util.h"
#include "transport/client.h"

/* Largest single RDMA: well under every device's max_msg_sz (2 GiB on most). */
#define MAX_RDMA_CHUNK ((size_t)1 << 30)

/* Room for packed data in one request to the data server. */
static size_t request_room(void)
{
    return MIN(cfg.server_buf_size, cfg.bounce_size) - sizeof(struct ds_message);
}

/* The local and remote strides of a box transfer, whichever way it goes. */
static const int *local_strides(const struct transfer *x)
{
    return x->op == TRANSFER_GET ? x->d.dst_stride : x->d.src_stride;
}

static const int *remote_strides(const struct transfer *x)
{
    return x->op == TRANSFER_GET ? x->d.src_stride : x->d.dst_stride;
}

/* ---- pieces: strided boxes of at most max_bytes packed bytes ---- */

/*
 * Wraps stride_pieces so that rows longer than max_bytes are split too
 * (into runs of whole `unit`s: an accumulate never splits an element).
 * Offsets are local (src_off) and remote (dst_off).
 */
struct piece_walk {
    struct stride_desc by_side; /* local strides as src, remote as dst */
    size_t max_bytes;
    size_t unit;
    bool split_rows;
    struct stride_pieces pieces; /* rows that fit */
    struct stride_iter rows;     /* rows that do not */
    size_t row_off;
};

static void piece_walk_begin(struct piece_walk *w, const struct transfer *x, size_t max_bytes,
                             size_t unit)
{
    w->by_side = (struct stride_desc){x->d.levels, x->d.count, local_strides(x), remote_strides(x)};
    w->unit = unit;
    w->max_bytes = max_bytes / unit * unit;
    w->split_rows = (size_t)x->d.count[0] > w->max_bytes;
    w->row_off = 0;
    if (w->split_rows)
        stride_iter_begin(&w->rows, &w->by_side);
    else
        stride_pieces_begin(&w->pieces, &w->by_side, w->max_bytes);
}

static bool piece_walk_next(struct piece_walk *w, struct stride_piece *p)
{
    if (!w->split_rows)
        return stride_pieces_next(&w->pieces, p);
    if (w->rows.done)
        return false;
    size_t row = (size_t)w->by_side.count[0];
    size_t n = MIN(w->max_bytes, row - w->row_off);
    *p = (struct stride_piece){.levels = 0,
                               .count = {(int)n},
                               .src_off = w->rows.src_off + w->row_off,
                               .dst_off = w->rows.dst_off + w->row_off,
                               .bytes = n};
    w->row_off += n;
    if (w->row_off == row) {
        w->row_off = 0;
        stride_iter_next(&w->rows);
    }
    return true;
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

/* Where a piece read into a bounce buffer goes when its data has arrived. */
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

static void unpack_on_arrival(struct work *f)
{
    struct unpack_ctx *u = f->ctx;
    pack_piece(&u->piece, u->strides, f->data->buf, u->dst, false);
    free(u);
}

/* ---- the RDMA path ---- */

/* One RDMA per chunk of the box, straight from/to registered user memory: one work for all
 * of them, completed by the last (`wanted`: someone waits for it now). */
static void rdma_in_place(struct conn *c, const struct transfer *x, uint32_t lkey,
                          struct handle *req, bool wanted)
{
    bool write = x->op == TRANSFER_PUT;
    enum ibv_wr_opcode op = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    struct stride_desc walk = {x->d.levels, x->d.count, local_strides(x), remote_strides(x)};
    size_t row = (size_t)x->d.count[0];
    size_t per_row = (row + MAX_RDMA_CHUNK - 1) / MAX_RDMA_CHUNK;
    size_t left = per_row * stride_chunks(x->d.count, x->d.levels);
    struct work *w = work_new(write ? WORK_WRITE : WORK_READ, c, req);
    struct rdma_batch batch;
    rdma_batch_init(&batch);
    struct stride_iter it;
    for (stride_iter_begin(&it, &walk); !it.done; stride_iter_next(&it)) {
        for (size_t off = 0; off < row; off += MAX_RDMA_CHUNK) {
            size_t n = MIN(MAX_RDMA_CHUNK, row - off);
            rdma_batch_add(&batch, c, op, x->local + it.src_off + off, lkey, n,
                           x->remote.server_addr + it.dst_off + off, x->remote.rkey, w, --left == 0,
                           wanted);
        }
    }
    rdma_batch_flush(&batch);
}

/*
 * Through bounce buffers, one piece (at most one buffer) at a time: packed
 * before its writes, or unpacked when the last read of the piece completes.
 * Each piece is one work, whose completion releases its buffer.
 */
static void rdma_bounced(struct conn *c, const struct transfer *x, struct handle *req)
{
    bool write = x->op == TRANSFER_PUT;
    enum ibv_wr_opcode op = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    enum work_kind kind = write ? WORK_WRITE : WORK_READ;
    struct rdma_batch batch;
    rdma_batch_init(&batch);
    struct piece_walk w;
    struct stride_piece p;
    piece_walk_begin(&w, x, cfg.bounce_size, 1);
    while (piece_walk_next(&w, &p)) {
        rdma_batch_flush(&batch); /* bounce_get may wait for earlier operations */
        struct bounce *b = bounce_get();
        if (write)
            pack_piece(&p, local_strides(x), x->local + p.src_off, b->buf, true);
        int packed[ARMCI_MAX_STRIDE_LEVEL];
        stride_packed(p.count, p.levels, packed);
        struct stride_desc walk = {p.levels, p.count, packed, remote_strides(x)};
        struct work *f = work_new(kind, c, req);
        if (write) {
            f->bounce = b;
        } else {
            f->data = b;
            f->on_done = unpack_on_arrival;
            f->ctx = unpack_ctx_new(&p, local_strides(x), x->local + p.src_off);
        }
        size_t left = stride_chunks(p.count, p.levels);
        struct stride_iter it;
        for (stride_iter_begin(&it, &walk); !it.done; stride_iter_next(&it))
            rdma_batch_add(&batch, c, op, (char *)b->buf + it.src_off, b->lkey, (size_t)p.count[0],
                           x->remote.server_addr + p.dst_off + it.dst_off, x->remote.rkey, f,
                           --left == 0, true);
    }
    rdma_batch_flush(&batch);
}

/*
 * Put or get by RDMA. Registered memory moves in place, except for a
 * blocking put that would have to wait for its writes: copying up to one
 * bounce buffer is cheaper than the wait. Writes small enough to be inlined
 * into the work request need neither.
 */
static void rdma_transfer(struct conn *c, const struct transfer *x, struct handle *req,
                          bool blocking)
{
    wait_server_updates(c);
    bool put = x->op == TRANSFER_PUT;
    size_t extent = stride_extent(local_strides(x), x->d.count, x->d.levels);
    bool contiguous = x->d.levels == 0;
    if (put && contiguous && extent <= c->max_inline) {
        rdma_in_place(c, x, 0, req, false); /* inline: nobody waits for it */
        return;
    }
    uint32_t lkey;
    bool copy_is_cheaper = put && blocking && extent <= cfg.bounce_size;
    if (!copy_is_cheaper && net_user_lkey(x->local, extent, &lkey)) {
        struct handle done = {0};
        /* Zero-copy: a blocking put's source is the NIC's until its writes complete. */
        struct handle *r = put && blocking ? &done : req;
        rdma_in_place(c, x, lkey, r, blocking); /* a blocking get waits in issue() */
        if (r == &done)
            handle_wait(&done);
        return;
    }
    rdma_bounced(c, x, req);
}

/* ---- the data-server path ---- */

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

/* Puts and accumulates: each piece packed into a request the server scatters or applies. */
/* Rows shorter than this are packed by copying: cheaper than a gather entry each. */
#define GATHER_MIN_ROW 512

/* How a put or accumulate goes through the data server: in place or copied, piece size. */
struct server_plan {
    bool in_place; /* the SENDs gather the user's rows (registered memory) */
    uint32_t lkey;
    size_t max_bytes; /* payload per request */
};

/*
 * x's local side goes out in place if it is registered and its rows long
 * enough to be worth a gather entry each; pieces are then cut so that their
 * rows fit the QP's gather list beside the header.
 */
static struct server_plan plan_server(const struct conn *c, const struct transfer *x, size_t unit)
{
    struct server_plan pl = {.max_bytes = request_room() / unit * unit};
    size_t row = (size_t)x->d.count[0];
    size_t extent = stride_extent(local_strides(x), x->d.count, x->d.levels);
    if (extent == SIZE_MAX || !net_user_lkey(x->local, extent, &pl.lkey))
        return pl;
    if (x->d.levels == 0 || row >= pl.max_bytes) {
        pl.in_place = true; /* every piece is one run: one gather entry */
        return pl;
    }
    if (row < GATHER_MIN_ROW || c->max_sge < 3)
        return pl;
    size_t rows = MIN((size_t)c->max_sge - 1, pl.max_bytes / row);
    pl.max_bytes = MIN(pl.max_bytes, rows * row / unit * unit);
    pl.in_place = pl.max_bytes >= row;
    if (!pl.in_place)
        pl.max_bytes = request_room() / unit * unit;
    return pl;
}

/* Requests x takes through the server with pieces of at most max_bytes. */
static size_t pieces_of(const struct transfer *x, size_t max_bytes)
{
    size_t row = (size_t)x->d.count[0], chunks = stride_chunks(x->d.count, x->d.levels);
    if (row > max_bytes)
        return chunks * ((row + max_bytes - 1) / max_bytes);
    size_t per_piece = max_bytes / row;
    return (chunks + per_piece - 1) / per_piece;
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

/*
 * Puts and accumulates: each piece becomes a request the server scatters or
 * applies. When the user's memory is registered (and rows are not tiny),
 * nothing is copied here: the request's SEND gathers the header and the
 * piece's rows in place, and they belong to the operation until that SEND
 * completes (counted in `sent`, if given: a blocking caller waits there,
 * not for the server's answers). Otherwise each piece is packed into the
 * request's buffer.
 */
static void send_packed(struct conn *c, const struct transfer *x, const struct server_plan *pl,
                        struct handle *req, struct handle *sent)
{
    bool acc = x->op == TRANSFER_ACC;
    int op = acc ? DS_ACC_PACKED : DS_PUT_PACKED;
    const char *what = acc ? "accumulate" : "strided put";
    size_t unit = acc ? acc_elem_size(x->datatype) : 1;
    struct piece_walk w;
    struct stride_piece p;
    piece_walk_begin(&w, x, pl->max_bytes, unit);
    while (piece_walk_next(&w, &p)) {
        struct bounce *b;
        struct ds_message *rq = message_begin(c, op, &x->remote, p.dst_off, p.bytes, &b);
        server_layout(&rq->stride, &p, remote_strides(x));
        if (acc) {
            rq->datatype = (uint8_t)x->datatype;
            memcpy(rq->scale, x->scale, unit);
        }
        struct work *f = work_new(WORK_MESSAGE, c, req);
        const char *from = x->local + p.src_off;
        if (pl->in_place) {
            struct ibv_sge sge[RC_QP_MAX_SGE];
            int n = piece_gather(&p, local_strides(x), from, pl->lkey, sge);
            if (sent) {
                f->sent = sent;
                handle_op_started(sent);
            }
            message_send_from(c, rq, b, sge, n, p.bytes, f, what);
            continue;
        }
        pack_piece(&p, local_strides(x), from, (char *)(rq + 1), true);
        message_send(c, rq, b, p.bytes, f, what);
    }
}

/* Whether x's local side is one contiguous run (its strides are those of its packed image). */
static bool local_contiguous(const struct transfer *x)
{
    int packed[ARMCI_MAX_STRIDE_LEVEL];
    stride_packed(x->d.count, x->d.levels, packed);
    const int *strides = local_strides(x);
    for (int i = 0; i < x->d.levels; i++)
        if (x->d.count[i + 1] > 1 && strides[i] != packed[i])
            return false;
    return true;
}

/* A get's pieces: a bounce buffer each, or, landing in place, as many rows as the server's
 * gather list takes (it writes them in one RDMA write: the rows of 64 KiB requests then). */
static size_t get_piece_bytes(const struct conn *c, const struct transfer *x, bool direct)
{
    size_t piece = MIN(cfg.bounce_size, request_room());
    if (!direct)
        return piece;
    size_t rows = (size_t)c->server_gather;
    return MAX(piece, MIN(rows * (size_t)x->d.count[0], (size_t)1 << 20));
}

/*
 * Gets: the server gathers each piece and RDMA-writes it to us, straight
 * into the user's buffer when that is one registered run (nothing to
 * unpack), else into a bounce buffer unpacked on arrival.
 */
static void get_packed(struct conn *c, const struct transfer *x, struct handle *req)
{
    size_t extent = stride_extent(local_strides(x), x->d.count, x->d.levels);
    uint32_t lkey, rkey = 0;
    bool direct =
        local_contiguous(x) && extent != SIZE_MAX && net_user_keys(x->local, extent, &lkey, &rkey);
    struct piece_walk w;
    struct stride_piece p;
    piece_walk_begin(&w, x, get_piece_bytes(c, x, direct), 1);
    while (piece_walk_next(&w, &p)) {
        struct bounce *data = direct ? NULL : bounce_get();
        struct bounce *b;
        struct ds_message *rq = message_begin(c, DS_GET_PACKED, &x->remote, p.dst_off, p.bytes, &b);
        server_layout(&rq->stride, &p, remote_strides(x));
        struct work *f = work_new(WORK_MESSAGE, c, req);
        if (direct) {
            rq->reply_addr = (uintptr_t)(x->local + p.src_off);
            rq->reply_rkey = rkey;
        } else {
            rq->reply_addr = (uintptr_t)data->buf;
            rq->reply_rkey = data->rkey;
            f->data = data;
            f->on_done = unpack_on_arrival;
            f->ctx = unpack_ctx_new(&p, local_strides(x), x->local + p.src_off);
        }
        message_send(c, rq, b, 0, f, "strided get");
    }
}

/* ---- vectors: n segments of equal size ---- */

/* Segments per request: each costs an 8-byte address plus its data (none for gets). */
static int vector_batch(size_t bytes, bool carries_data)
{
    size_t per = sizeof(uint64_t) + (carries_data ? bytes : 0);
    size_t k = request_room() / per;
    if (!carries_data)
        k = MIN(k, cfg.bounce_size / bytes);
    return (int)k;
}

/* Where the gathered segments of a vector get go when they arrive. */
struct scatter_ctx {
    int k;
    size_t bytes;
    void *dst[];
};

static void scatter_on_arrival(struct work *f)
{
    struct scatter_ctx *s = f->ctx;
    for (int i = 0; i < s->k; i++)
        memcpy(s->dst[i], (char *)f->data->buf + (size_t)i * s->bytes, s->bytes);
    free(s);
}

/* Sends k segments (from index first) in one request. */
static void send_vector_batch(struct conn *c, const struct transfer *x, int first, int k,
                              struct handle *req)
{
    static const int ops[] = {
        [TRANSFER_PUT] = DS_PUT_IOV, [TRANSFER_GET] = DS_GET_IOV, [TRANSFER_ACC] = DS_ACC_IOV};
    static const char *const what[] = {[TRANSFER_PUT] = "vector put",
                                       [TRANSFER_GET] = "vector get",
                                       [TRANSFER_ACC] = "vector accumulate"};
    const struct target *ts = x->remotes + first;
    void *const *local = x->locals + first;
    bool carries_data = x->op != TRANSFER_GET;
    size_t payload = (size_t)k * (sizeof(uint64_t) + (carries_data ? x->bytes : 0));
    struct bounce *b;
    struct ds_message *rq = message_begin(c, ops[x->op], &ts[0], 0, x->bytes, &b);
    rq->value = k;
    if (x->op == TRANSFER_ACC) {
        rq->datatype = (uint8_t)x->datatype;
        memcpy(rq->scale, x->scale, acc_elem_size(x->datatype));
    }
    uint64_t *addrs = (uint64_t *)(rq + 1);
    char *data = (char *)(addrs + k);
    for (int i = 0; i < k; i++) {
        addrs[i] = ts[i].server_addr;
        if (carries_data)
            memcpy(data + (size_t)i * x->bytes, local[i], x->bytes);
    }
    struct work *f = work_new(WORK_MESSAGE, c, req);
    if (x->op == TRANSFER_GET) {
        struct scatter_ctx *s = xmalloc(sizeof(*s) + sizeof(void *) * (size_t)k);
        s->k = k;
        s->bytes = x->bytes;
        memcpy(s->dst, local, sizeof(void *) * (size_t)k);
        f->data = bounce_get();
        f->on_done = scatter_on_arrival;
        f->ctx = s;
        rq->reply_addr = (uintptr_t)f->data->buf;
        rq->reply_rkey = f->data->rkey;
    }
    message_send(c, rq, b, payload, f, what[x->op]);
}

static void issue_box(struct conn *c, const struct transfer *x, struct handle *req, bool blocking);

/* Small segments travel many to a request; large ones as contiguous transfers of their own. */
static void issue_vector(struct conn *c, const struct transfer *x, struct handle *req,
                         bool blocking)
{
    int k = vector_batch(x->bytes, x->op != TRANSFER_GET);
    if (x->bytes < route_vector_threshold() && k >= 2) {
        for (int i = 0; i < x->n; i += k)
            send_vector_batch(c, x, i, MIN(k, x->n - i), req);
        return;
    }
    int count[1] = {(int)x->bytes};
    for (int i = 0; i < x->n; i++) {
        struct transfer one = {.op = x->op,
                               .datatype = x->datatype,
                               .scale = x->scale,
                               .local = x->locals[i],
                               .remote = x->remotes[i],
                               .d = {0, count, NULL, NULL}};
        issue_box(c, &one, req, blocking);
    }
}

#define PULL_MIN_BYTES ((size_t)64 << 10)

/*
 * A strided put whose source is one registered run: its requests carry no
 * data, the server RDMA-reads each piece straight into place (DS_PUT_PULL;
 * as many rows as its gather list takes). The source belongs to the
 * operation until the server has read it, i.e. until it answers: a
 * blocking put waits for that (the put is then complete at the target too).
 */
static void pull_put(struct conn *c, const struct transfer *x, uint32_t rkey, struct handle *req,
                     bool blocking)
{
    struct handle done = {0};
    struct handle *r = blocking ? &done : req;
    size_t piece = MIN((size_t)c->server_gather * (size_t)x->d.count[0], (size_t)1 << 20);
    struct piece_walk w;
    struct stride_piece p;
    piece_walk_begin(&w, x, piece, 1);
    while (piece_walk_next(&w, &p)) {
        struct bounce *b;
        struct ds_message *rq = message_begin(c, DS_PUT_PULL, &x->remote, p.dst_off, p.bytes, &b);
        server_layout(&rq->stride, &p, remote_strides(x));
        rq->reply_addr = (uintptr_t)(x->local + p.src_off);
        rq->reply_rkey = rkey;
        message_send(c, rq, b, 0, work_new(WORK_MESSAGE, c, r), "strided put");
    }
    if (blocking)
        handle_wait(&done);
}

/* ---- choosing the path ---- */

/* Puts and accumulates through the server: a blocking call returns when the source may be
 * reused (copied, or sent). */
static void server_put(struct conn *c, const struct transfer *x, const struct server_plan *pl,
                       struct handle *req, bool blocking)
{
    struct handle sent = {0};
    send_packed(c, x, pl, req, blocking ? &sent : NULL);
    if (sent.pending)
        handle_wait(&sent);
}

static void issue_box(struct conn *c, const struct transfer *x, struct handle *req, bool blocking)
{
    size_t unit = x->op == TRANSFER_ACC ? acc_elem_size(x->datatype) : 1;
    if (x->op == TRANSFER_ACC) {
        struct server_plan pl = plan_server(c, x, unit);
        server_put(c, x, &pl, req, blocking);
        return;
    }
    /* Chunks of a request or more: the server would only cut them up. */
    if (x->d.levels == 0 || (size_t)x->d.count[0] > request_room()) {
        rdma_transfer(c, x, req, blocking);
        return;
    }
    /* A source or destination that is one registered run: the server moves the data itself. */
    size_t extent = stride_extent(local_strides(x), x->d.count, x->d.levels);
    uint32_t lkey, rkey;
    bool direct =
        local_contiguous(x) && extent != SIZE_MAX && net_user_keys(x->local, extent, &lkey, &rkey);
    /* A pull's answer is a round trip: below this a copy here costs less than waiting. */
    size_t bytes = (size_t)x->d.count[0] * stride_chunks(x->d.count, x->d.levels);
    if (x->op == TRANSFER_PUT && direct && bytes >= PULL_MIN_BYTES) {
        size_t piece = MIN((size_t)c->server_gather * (size_t)x->d.count[0], (size_t)1 << 20);
        if (route_via_server(x, pieces_of(x, piece), true))
            pull_put(c, x, rkey, req, blocking);
        else
            rdma_transfer(c, x, req, blocking);
        return;
    }
    if (x->op == TRANSFER_PUT) {
        struct server_plan pl = plan_server(c, x, unit);
        if (route_via_server(x, pieces_of(x, pl.max_bytes), pl.in_place))
            server_put(c, x, &pl, req, blocking);
        else
            rdma_transfer(c, x, req, blocking);
        return;
    }
    if (route_via_server(x, pieces_of(x, get_piece_bytes(c, x, direct)), direct))
        get_packed(c, x, req);
    else
        rdma_transfer(c, x, req, blocking);
}

/* Issues x on its ready connection; a blocking get returns with the data. */
static void issue(struct conn *c, const struct transfer *x, struct handle *req, bool blocking)
{
    struct handle done = {0};
    bool wait_here = blocking && x->op == TRANSFER_GET;
    struct handle *r = wait_here ? &done : req;
    if (x->locals)
        issue_vector(c, x, r, blocking);
    else
        issue_box(c, x, r, blocking);
    if (wait_here)
        handle_wait(&done);
}

/* ---- operations waiting for their connection ---- */

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
    if (c->io->queue_tail)
        c->io->queue_tail->next = op;
    else
        c->io->queue_head = op;
    c->io->queue_tail = op;
    c->io->queued++;
    /* Counted now, so fences and waits see it. */
    c->io->outstanding++;
    ep.outstanding++;
    handle_op_started(req);
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
        c->io->queue_head = op->next;
        if (!c->io->queue_head)
            c->io->queue_tail = NULL;
        c->io->queued--;
        issue(c, &op->x, op->req, false);
        /* The real operations count themselves; drop the placeholder. */
        c->io->outstanding--;
        ep.outstanding--;
        handle_op_done(op->req);
        pending_free(op);
    }
    c->io->draining = false;
}

/* Connections that became ready with operations queued on them. */
static struct conn **to_drain;
static int nto_drain, capto_drain;

void conn_on_ready(struct conn *c)
{
    if (!c->io->queue_head)
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

void conn_forget(struct conn *c)
{
    if (!c->io)
        return;
    sq_forget(c);
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
           io->sq_dirty;
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

/* The connection to node, pinned (not closed under us; conn_put lets it go), maybe not ready:
 * at the connection cap, waits for room. */
static struct conn *conn_pin(int node)
{
    struct conn *c;
    while (!(c = cm_conn_start(node)))
        progress_wait();
    c->io->pinned++;
    return c;
}

void conn_put(struct conn *c)
{
    c->io->pinned--;
}

struct conn *conn_get(int node)
{
    return conn_wait_ready(conn_pin(node));
}

/* ---- entry ---- */

void transfer_start(const struct transfer *x, struct handle *req, bool blocking)
{
    if (x->locals && x->n == 0)
        return;
    rt_lock();
    const struct target *t = x->locals ? &x->remotes[0] : &x->remote;
    struct conn *c = conn_pin(t->node);
    if (!queue_if_connecting(c, x, req, blocking))
        issue(conn_wait_ready(c), x, req, blocking);
    conn_put(c);
    rt_unlock();
}

/* The shapes the API layer hands over, as transfers. */

void remote_put(const struct target *t, const void *src, size_t bytes, struct handle *req,
                bool blocking)
{
    int count[1] = {(int)bytes};
    struct transfer x = {
        .op = TRANSFER_PUT, .local = (char *)src, .remote = *t, .d = {0, count, NULL, NULL}};
    transfer_start(&x, req, blocking);
}

void remote_get(const struct target *t, void *dst, size_t bytes, struct handle *req, bool blocking)
{
    int count[1] = {(int)bytes};
    struct transfer x = {
        .op = TRANSFER_GET, .local = dst, .remote = *t, .d = {0, count, NULL, NULL}};
#if ARMCI_MUTANT_IS(get_wrong_offset)
    x.remote.server_addr += bytes > 8 ? 8 : 0;
    count[0] -= bytes > 8 ? 8 : 0;
#endif
    transfer_start(&x, req, blocking);
}

void remote_acc(const struct target *t, int datatype, const void *scale, const void *src,
                size_t bytes, struct handle *req, bool blocking)
{
    int count[1] = {(int)bytes};
    struct transfer x = {.op = TRANSFER_ACC,
                         .datatype = datatype,
                         .scale = scale,
                         .local = (char *)src,
                         .remote = *t,
                         .d = {0, count, NULL, NULL}};
    transfer_start(&x, req, blocking);
}

void strided_remote_put(const struct target *t, const struct stride_desc *d, const char *src,
                        struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_PUT, .local = (char *)src, .remote = *t, .d = *d};
    transfer_start(&x, req, blocking);
}

void strided_remote_get(const struct target *t, const struct stride_desc *d, char *dst,
                        struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_GET, .local = dst, .remote = *t, .d = *d};
    transfer_start(&x, req, blocking);
}

void strided_remote_acc(const struct target *t, const struct stride_desc *d, int datatype,
                        const void *scale, const char *src, struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_ACC,
                         .datatype = datatype,
                         .scale = scale,
                         .local = (char *)src,
                         .remote = *t,
                         .d = *d};
    transfer_start(&x, req, blocking);
}

void vector_remote_put(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking)
{
    struct transfer x = {
        .op = TRANSFER_PUT, .n = n, .bytes = bytes, .locals = local, .remotes = ts};
    transfer_start(&x, req, blocking);
}

void vector_remote_get(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking)
{
    struct transfer x = {
        .op = TRANSFER_GET, .n = n, .bytes = bytes, .locals = local, .remotes = ts};
    transfer_start(&x, req, blocking);
}

void vector_remote_acc(const struct target *ts, void *const *local, int n, size_t bytes,
                       int datatype, const void *scale, struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_ACC,
                         .datatype = datatype,
                         .scale = scale,
                         .n = n,
                         .bytes = bytes,
                         .locals = local,
                         .remotes = ts};
    transfer_start(&x, req, blocking);
}
