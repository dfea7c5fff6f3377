#include "vector_remote.h"

#include <stdlib.h>
#include <string.h>

#include "../acc.h"
#include "../client/client.h"
#include "../config.h"
#include "../dataserver/protocol.h"
#include "../odcm/cm.h"
#include "../remote.h"
#include "../thread_check.h"
#include "../util.h"

static size_t request_room(void)
{
    return MIN(cfg.server_buf_size, cfg.bounce_size) - sizeof(struct ds_request);
}

/* Segments per request: each costs an 8-byte address plus its data (none for gets). */
static int batch_size(size_t bytes, bool carries_data)
{
    size_t per = sizeof(uint64_t) + (carries_data ? bytes : 0);
    size_t k = request_room() / per;
    if (!carries_data)
        k = MIN(k, cfg.bounce_size / bytes);
    return (int)k;
}

static bool batched(size_t bytes, bool carries_data)
{
    return bytes < cfg.strided_threshold && batch_size(bytes, carries_data) >= 2;
}

static void scatter_on_arrival(struct inflight *f);

/* Sends k segments in one request; a get's data is scattered by `scatter` on arrival. */
static void send_batch(int op, const struct target *ts, void *const *local, int k, size_t bytes,
                       int datatype, const void *scale, struct request *req, void *scatter)
{
    struct conn *c = conn_get(ts[0].node);
    bool carries_data = op != DS_GET_IOV;
    size_t payload = (size_t)k * (sizeof(uint64_t) + (carries_data ? bytes : 0));
    struct bounce *b;
    struct ds_request *rq = request_begin(c, op, &ts[0], 0, bytes, &b);
    rq->value = k;
    if (op == DS_ACC_IOV) {
        rq->datatype = (uint8_t)datatype;
        memcpy(rq->scale, scale, acc_elem_size(datatype));
    }
    uint64_t *addrs = (uint64_t *)(rq + 1);
    char *data = (char *)(addrs + k);
    for (int i = 0; i < k; i++) {
        addrs[i] = ts[i].server_addr;
        if (carries_data)
            memcpy(data + (size_t)i * bytes, local[i], bytes);
    }
    struct inflight *f = inflight_new(INF_REQUEST, c, req);
    if (op == DS_GET_IOV) {
        f->data = bounce_get();
        f->on_done = scatter_on_arrival;
        f->ctx = scatter;
        rq->reply_addr = (uintptr_t)f->data->buf;
        rq->reply_rkey = f->data->rkey;
    }
    request_send(c, rq, b, payload, f,
                 op == DS_PUT_IOV   ? "vector put"
                 : op == DS_ACC_IOV ? "vector accumulate"
                                    : "vector get");
}

void vector_remote_put(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct request *req, bool blocking)
{
    thread_check_enter();
    if (!batched(bytes, true)) {
        for (int i = 0; i < n; i++)
            remote_put(&ts[i], local[i], bytes, req, blocking);
    } else {
        int k = batch_size(bytes, true);
        for (int i = 0; i < n; i += k) /* data is copied into the requests: local is free at once */
            send_batch(DS_PUT_IOV, ts + i, local + i, MIN(k, n - i), bytes, 0, NULL, req, NULL);
    }
    thread_check_leave();
}

void vector_remote_acc(const struct target *ts, void *const *local, int n, size_t bytes,
                       int datatype, const void *scale, struct request *req, bool blocking)
{
    thread_check_enter();
    if (!batched(bytes, true)) {
        for (int i = 0; i < n; i++)
            remote_acc(&ts[i], datatype, scale, local[i], bytes, req, blocking);
    } else {
        int k = batch_size(bytes, true);
        for (int i = 0; i < n; i += k)
            send_batch(DS_ACC_IOV, ts + i, local + i, MIN(k, n - i), bytes, datatype, scale, req,
                       NULL);
    }
    thread_check_leave();
}

/* Where the gathered segments of a vector get go when they arrive. */
struct scatter_ctx {
    int k;
    size_t bytes;
    void *dst[];
};

static void scatter_on_arrival(struct inflight *f)
{
    struct scatter_ctx *s = f->ctx;
    for (int i = 0; i < s->k; i++)
        memcpy(s->dst[i], (char *)f->data->buf + (size_t)i * s->bytes, s->bytes);
    free(s);
}

void vector_remote_get(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct request *req, bool blocking)
{
    thread_check_enter();
    struct request done = {0};
    struct request *r = blocking ? &done : req;
    if (!batched(bytes, false)) {
        for (int i = 0; i < n; i++)
            remote_get(&ts[i], local[i], bytes, r, false);
    } else {
        int k = batch_size(bytes, false);
        for (int i = 0; i < n; i += k) {
            int m = MIN(k, n - i);
            struct scatter_ctx *s = xmalloc(sizeof(*s) + sizeof(void *) * (size_t)m);
            s->k = m;
            s->bytes = bytes;
            memcpy(s->dst, local + i, sizeof(void *) * (size_t)m);
            send_batch(DS_GET_IOV, ts + i, local + i, m, bytes, 0, NULL, r, s);
        }
    }
    if (blocking)
        req_wait(&done);
    thread_check_leave();
}
