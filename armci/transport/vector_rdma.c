/*
 * Vectors by RDMA (vector_rdma.h): one chain of RDMA writes or reads, a
 * request per segment, posted with one doorbell; the target's CPU does
 * nothing. Segments small enough to be inlined are copied into the chain;
 * others travel through bounce buffers, packed back to back (a put) or
 * read into them and scattered to their destinations when the buffer's
 * last read completes (a get). The user's memory is never registered here:
 * the segments this path takes are small, and GA's are in its own arrays.
 */
#include "transport/vector_rdma.h"

#include <string.h>

#include "core/config.h"
#include "core/mutant.h"
#include "core/util.h"
#include "transport/pieces.h"
#include "transport/rdma_path.h"
#include "transport/send_queue.h"
#include "transport/work.h"

/* Segments [first, first + k) of get x read into one bounce buffer, as one work. */
static void get_into_bounce(struct sq_batch *batch, struct conn *c, const struct transfer *x,
                            int first, int k, struct handle *req)
{
    sq_batch_flush(batch); /* bounce_wait may wait for earlier operations */
    struct pool_buffer *b = bounce_wait();
    struct work *f = work_new(WORK_READ, c, req);
    f->data = b;
    f->on_done = scatter_on_arrival;
    f->ctx = scatter_ctx_new(x->locals + first, k, x->bytes);
    for (int i = 0; i < k; i++) {
        const struct target *t = &x->remotes[first + i];
        sq_batch_add(batch, c, IBV_WR_RDMA_READ, (char *)b->addr + (size_t)i * x->bytes, b->lkey,
                     x->bytes, t->server_addr, t->rkey, f, i == k - 1, true);
    }
}

/* Segments [first, first + k) of put x packed into one bounce buffer and written from it. */
static void put_from_bounce(struct sq_batch *batch, struct conn *c, const struct transfer *x,
                            int first, int k, struct handle *req)
{
    sq_batch_flush(batch);
    struct pool_buffer *b = bounce_wait();
    struct work *f = work_new(WORK_WRITE, c, req);
    f->bounce = b;
    for (int i = 0; i < k; i++) {
        char *at = (char *)b->addr + (size_t)i * x->bytes;
        const struct target *t = &x->remotes[first + i];
        memcpy(at, x->locals[first + i], x->bytes);
        sq_batch_add(batch, c, IBV_WR_RDMA_WRITE, at, b->lkey, x->bytes, t->server_addr, t->rkey, f,
                     i == k - 1, false);
    }
}

/* Every segment of put x copied into the chain itself: its sources are free at once. */
static void put_inline(struct sq_batch *batch, struct conn *c, const struct transfer *x,
                       struct handle *req)
{
    struct work *f = work_new(WORK_WRITE, c, req);
    for (int i = 0; i < x->n; i++) {
        const struct target *t = &x->remotes[i];
        sq_batch_add(batch, c, IBV_WR_RDMA_WRITE, x->locals[i], 0, x->bytes, t->server_addr,
                     t->rkey, f, i == x->n - 1, false);
    }
}

void rdma_vector(struct conn *c, const struct transfer *x, struct handle *req, bool blocking)
{
#if !ARMCI_MUTANT_IS(vector_chain_overtakes)
    wait_server_updates(c);
#endif
    struct sq_batch batch;
    /* A blocking get waits for its reads: they go now. A put's sources are copied either way,
     * so its writes may wait in the chain for the next post, wait or fence. */
    bool get = x->op == TRANSFER_GET;
    sq_batch_init(&batch, !blocking || !get);
    if (!get && x->bytes <= sq_inline_max(c)) {
        put_inline(&batch, c, x, req);
    } else {
        int per_buffer = (int)MAX((size_t)1, cfg.bounce_size / x->bytes);
        for (int first = 0; first < x->n; first += per_buffer) {
            int k = MIN(per_buffer, x->n - first);
            if (get)
                get_into_bounce(&batch, c, x, first, k, req);
            else
                put_from_bounce(&batch, c, x, first, k, req);
        }
    }
    sq_batch_flush(&batch);
}
