/*
 * Vectors through the data server (vector_path.h): many small segments in
 * one request, addresses first, then their data (none for gets, whose data
 * the server gathers and writes back into a bounce buffer).
 */
#include "transport/vector_path.h"

#include <stdlib.h>
#include <string.h>

#include "core/acc.h"
#include "core/config.h"
#include "core/util.h"
#include "wire/protocol.h"
#include "transport/requests.h"
#include "transport/work.h"
#include "transport/pieces.h"
#include "transport/route.h"

/* Segments per request: each costs an 8-byte address plus its data (none for gets). */
int vector_batch(enum transfer_op op, size_t bytes)
{
    bool carries_data = op != TRANSFER_GET;
    size_t per = sizeof(uint64_t) + (carries_data ? bytes : 0);
    /* A put's or accumulate's segments may be pulled (requests.h); a get's addresses are sent. */
    size_t k = (carries_data ? request_piece_room() : request_room()) / per;
    if (!carries_data)
        k = MIN(k, cfg.bounce_size / bytes);
    return (int)k;
}

/* k segments of x from index first: their addresses, then (put, acc) their data. */
struct segments {
    const struct transfer *x;
    int first, k;
};

static void fill_segments(void *to, const void *ctx)
{
    const struct segments *g = ctx;
    const struct transfer *x = g->x;
    uint64_t *addrs = to;
    char *data = (char *)(addrs + g->k);
    for (int i = 0; i < g->k; i++) {
        addrs[i] = x->remotes[g->first + i].server_addr;
        if (x->op != TRANSFER_GET)
            memcpy(data + (size_t)i * x->bytes, x->locals[g->first + i], x->bytes);
    }
}

/* Sends k segments (from index first) in one request. */
static void send_vector_batch(struct conn *c, const struct transfer *x, int first, int k,
                              struct handle *req, bool blocking)
{
    static const int ops[] = {
        [TRANSFER_PUT] = DS_PUT_IOV, [TRANSFER_GET] = DS_GET_IOV, [TRANSFER_ACC] = DS_ACC_IOV};
    static const char *const what[] = {[TRANSFER_PUT] = "vector put",
                                       [TRANSFER_GET] = "vector get",
                                       [TRANSFER_ACC] = "vector accumulate"};
    bool carries_data = x->op != TRANSFER_GET;
    struct segments g = {x, first, k};
    struct request_desc r = {.msg = {.op = (uint8_t)ops[x->op], .len = x->bytes, .value = k},
                             .t = &x->remotes[first],
                             .payload =
                                 (size_t)k * (sizeof(uint64_t) + (carries_data ? x->bytes : 0)),
                             .fill = fill_segments,
                             .fill_ctx = &g,
                             .defer = !blocking,
                             .req = req,
                             .what = what[x->op]};
    if (x->op == TRANSFER_ACC) {
        r.msg.datatype = (uint8_t)x->datatype;
        memcpy(r.msg.scale, x->scale, acc_elem_size(x->datatype));
    }
    if (x->op == TRANSFER_GET) {
        r.reply_to_bounce = true;
        r.on_done = scatter_on_arrival;
        r.ctx = scatter_ctx_new(x->locals + first, k, x->bytes);
    }
    request_post(c, &r);
}

void vector_send_batched(struct conn *c, const struct transfer *x, int per_request,
                         struct handle *req, bool blocking)
{
    for (int i = 0; i < x->n; i += per_request)
        send_vector_batch(c, x, i, MIN(per_request, x->n - i), req, blocking);
}
