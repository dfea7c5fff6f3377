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
#include "dataserver/protocol.h"
#include "transport/client.h"
#include "transport/pieces.h"
#include "transport/route.h"

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

bool vector_send_batched(struct conn *c, const struct transfer *x, struct handle *req)
{
    int k = vector_batch(x->bytes, x->op != TRANSFER_GET);
    if (x->bytes >= route_vector_threshold() || k < 2)
        return false;
    for (int i = 0; i < x->n; i += k)
        send_vector_batch(c, x, i, MIN(k, x->n - i), req);
    return true;
}
