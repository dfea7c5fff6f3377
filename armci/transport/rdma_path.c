/*
 * The RDMA path (rdma_path.h): chains of RDMA writes or reads, from the
 * user's memory when it is registered, else through bounce buffers packed
 * or unpacked per piece.
 */
#include "transport/rdma_path.h"

#include "core/config.h"
#include "core/mutant.h"
#include "core/util.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/send_queue.h"
#include "transport/progress.h"
#include "transport/work.h"
#include "transport/pieces.h"
#include "transport/route.h"
#include "verbs/memory.h"

/* Largest single RDMA: well under every device's max_msg_sz (2 GiB on most). */
#define MAX_RDMA_CHUNK ((size_t)1 << 30)

/* One RDMA per chunk of the box, straight from/to registered user memory: one work for all
 * of them, completed by the last (`wanted`: someone waits for it now; `defer`: a
 * non-blocking call, whose wait posts them: send_queue.h). */
static void rdma_in_place(struct conn *c, const struct transfer *x, uint32_t lkey,
                          struct handle *req, bool wanted, bool defer)
{
    bool write = x->op == TRANSFER_PUT;
    enum ibv_wr_opcode op = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    size_t row = (size_t)x->d.count[0];
    struct work *w = work_new(write ? WORK_WRITE : WORK_READ, c, req);
    struct sq_batch batch;
    sq_batch_init(&batch, defer);
    if (x->d.levels == 0 && row <= MAX_RDMA_CHUNK) {
        /* Contiguous, one RDMA: the common small put or get skips the stride walk. */
        sq_batch_add(&batch, c, op, x->local, lkey, row, x->remote.server_addr, x->remote.rkey, w,
                     true, wanted);
        sq_batch_flush(&batch);
        return;
    }
    struct stride_desc walk = {x->d.levels, x->d.count, local_strides(x), remote_strides(x)};
    size_t per_row = (row + MAX_RDMA_CHUNK - 1) / MAX_RDMA_CHUNK;
    size_t left = per_row * stride_chunks(x->d.count, x->d.levels);
    struct stride_iter it;
    for (stride_iter_begin(&it, &walk); !it.done; stride_iter_next(&it)) {
        for (size_t off = 0; off < row; off += MAX_RDMA_CHUNK) {
            size_t n = MIN(MAX_RDMA_CHUNK, row - off);
            sq_batch_add(&batch, c, op, x->local + it.src_off + off, lkey, n,
                         x->remote.server_addr + it.dst_off + off, x->remote.rkey, w, --left == 0,
                         wanted);
        }
    }
    sq_batch_flush(&batch);
}

/*
 * Where a piece read into a bounce buffer starts in it. A copy whose
 * destination lies a few bytes past its source modulo 4 KiB runs several
 * times slower (4 KiB aliasing: a 2 MiB get into a buffer 16 bytes past a
 * page boundary, as malloc's are, ran at 850 MB/s against 1500-3300 into
 * the same buffer page-aligned). Half a page away from the user's
 * destination keeps the unpacking copy clear of it, and the device's copy
 * from the remote address into the buffer is moved on if that lands it
 * there instead. Bounce buffers start on page boundaries.
 */
#define PAGE_BYTES   ((size_t)4096)
#define ALIAS_WINDOW ((size_t)256)

static size_t landing_offset(const char *dst, uint64_t remote)
{
    size_t at = ((uintptr_t)dst + PAGE_BYTES / 2) & (PAGE_BYTES - 1);
    if ((((size_t)at - (size_t)remote) & (PAGE_BYTES - 1)) - 1 < ALIAS_WINDOW)
        at = (at + 2 * ALIAS_WINDOW) & (PAGE_BYTES - 1);
    return at;
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
    struct sq_batch batch;
    sq_batch_init(&batch, false);
    struct piece_walk w;
    struct stride_piece p;
    /* Reads leave a page of the buffer for landing_offset. */
    bool shift = !write && cfg.bounce_size >= 4 * PAGE_BYTES;
    piece_walk_begin(&w, x, cfg.bounce_size - (shift ? PAGE_BYTES : 0), 1);
    while (piece_walk_next(&w, &p)) {
        sq_batch_flush(&batch); /* bounce_wait may wait for earlier operations */
        struct pool_buffer *b = bounce_wait();
        size_t at =
            shift ? landing_offset(x->local + p.src_off, x->remote.server_addr + p.dst_off) : 0;
        if (write)
            pack_piece(&p, local_strides(x), x->local + p.src_off, b->addr, true);
        int packed[ARMCI_MAX_STRIDE_LEVEL];
        stride_packed(p.count, p.levels, packed);
        struct stride_desc walk = {p.levels, p.count, packed, remote_strides(x)};
        struct work *f = work_new(kind, c, req);
        if (write)
            f->bounce = b;
        else
            unpack_on_completion(f, b, at, &p, local_strides(x), x->local + p.src_off);
        size_t left = stride_chunks(p.count, p.levels);
        struct stride_iter it;
        for (stride_iter_begin(&it, &walk); !it.done; stride_iter_next(&it))
            sq_batch_add(&batch, c, op, (char *)b->addr + at + it.src_off, b->lkey,
                         (size_t)p.count[0], x->remote.server_addr + p.dst_off + it.dst_off,
                         x->remote.rkey, f, --left == 0, true);
    }
    sq_batch_flush(&batch);
}

/*
 * Waits until the data server of c's node has applied every update sent to
 * it so far. RDMA bypasses the server, so an RDMA read or write issued after
 * a packed put or an accumulate to the same memory would overtake it: ARMCI
 * orders one origin's operations to one target, and GA relies on it.
 */
void wait_server_updates(struct conn *c)
{
#if ARMCI_MUTANT_IS(order_wait_skipped)
    return;
#endif
    uint64_t sent = c->io->updates_sent;
    while (c->io->updates_done < sent)
        progress_wait();
}

/* A write of len bytes (at most one bounce buffer) to raddr, copied from src into a bounce
 * buffer first (src is free at return), counted in req until it completes. */
static void post_write_copy(struct conn *c, const void *src, size_t len, uint64_t raddr,
                            uint32_t rkey, struct handle *req)
{
    struct pool_buffer *b = send_buffer_wait(len);
    memcpy(b->addr, src, len);
    struct work *w = work_new(WORK_WRITE, c, req);
    w->bounce = b; /* freed when the write completes */
    struct sq_batch batch;
    sq_batch_init(&batch, false);
    sq_batch_add(&batch, c, IBV_WR_RDMA_WRITE, b->addr, b->lkey, len, raddr, rkey, w, true, true);
    sq_batch_flush(&batch);
}

void rdma_transfer(struct conn *c, const struct transfer *x, struct handle *req, bool blocking)
{
    wait_server_updates(c);
    bool put = x->op == TRANSFER_PUT;
    size_t extent = stride_extent(local_strides(x), x->d.count, x->d.levels);
    bool contiguous = x->d.levels == 0;
    if (put && contiguous && extent <= sq_inline_max(c)) {
        /* Copied into the chain: nobody waits for it. */
        rdma_in_place(c, x, 0, req, false, !blocking);
        return;
    }
    uint32_t lkey, rkey;
    struct reg_entry *hold = NULL;
    bool copy_is_cheaper = put && blocking && extent <= cfg.bounce_size;
    bool keys = !copy_is_cheaper &&
                net_local_keys(x->local, extent, route_register_local(extent), &lkey, &rkey, &hold);
    if (keys) {
        struct handle done = {0};
        /* Zero-copy: a blocking put's source is the NIC's until its writes complete. */
        struct handle *r = put && blocking ? &done : req;
        rdma_in_place(c, x, lkey, r, blocking,
                      !blocking); /* a blocking get waits in transfer_issue */
        net_local_release(hold);
        if (r == &done)
            handle_wait(&done);
        return;
    }
    if (put && contiguous && extent <= cfg.bounce_size) {
        /* One piece: nothing to walk. */
        post_write_copy(c, x->local, extent, x->remote.server_addr, x->remote.rkey, req);
        return;
    }
    rdma_bounced(c, x, req);
}
