/*
 * The data server's side of the hybrid UD data path (dgram_server.h).
 * Nothing in a datagram is believed before it is checked: the sender is the
 * directory's UD data QP of the rank the header names, every request's
 * length fits the datagram, every range lies in a registered segment.
 */
#include "dataserver/dgram_server.h"
#include "dataserver/engine.h"

#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/hybrid_stats.h"
#include "core/mutant.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "wire/dgram_protocol.h"
#include "dataserver/handlers.h"
#include "wire/protocol.h"
#include "dataserver/registry.h"
#include "dataserver/resources.h"
#include "dataserver/sends.h"
#include "odcm/directory.h"
#include "odcm/ud.h"
#include "verbs/device.h"

/* Answers to the datagram being served, collected into as few datagrams as fit. */
struct answer_batch {
    int rank;
    struct engine_client *client; /* its sequence space, shared with its RC requests */
    size_t len;
    uint8_t count;
    uint8_t *buf; /* dgram_datagram_bytes() */
};

static struct ud_endpoint sud;
static uint8_t *answer_buf;
static bool on;
static int ud_clients; /* clients that have sent a request over UD */

size_t dgram_datagram_bytes(void)
{
    return dgram_size(cfg.hybrid_size, (int)vdev.mtu);
}

/* ---- answers ---- */

static void batch_send(struct answer_batch *b)
{
    if (!b->count)
        return;
    struct dgram_header h = {.magic = DGRAM_MAGIC,
                             .kind = DGRAM_ANSWERS,
                             .count = b->count,
                             .rank = topo.my_node,
                             .ack = (uint32_t)engine_next(b->client)};
    memcpy(b->buf, &h, sizeof(h));
    struct verbs_addr to;
    if (!directory_client_data(b->rank, &to)) /* every answered datagram's sender was known */
        armci_die("data server", "answering rank %d, whose UD address it does not know", b->rank);
    if (!ud_send_bytes(&sud, b->rank, &to, b->buf, b->len)) {
        server_drain_sends(); /* completions give send buffers back */
        if (!ud_send_bytes(&sud, b->rank, &to, b->buf, b->len))
            hybrid_stats.answers_unsent++; /* the client asks again */
    }
    b->len = sizeof(h);
    b->count = 0;
}

static void batch_add(struct answer_batch *b, uint32_t seq, int32_t status, int64_t value,
                      const void *data, size_t len)
{
    size_t step = dgram_step(sizeof(struct dgram_answer), len);
    if (b->len + step > dgram_datagram_bytes() || b->count == UINT8_MAX)
        batch_send(b);
    struct dgram_answer a = {.seq = seq, .status = status, .value = value, .len = (uint32_t)len};
    memcpy(b->buf + b->len, &a, sizeof(a));
    if (len)
        memcpy(b->buf + b->len + sizeof(a), data, len);
    b->len += step;
    b->count++;
}

/* ---- executing one request ---- */

/* The largest get an answer carries. */
static size_t get_room(void)
{
    return dgram_datagram_bytes() - sizeof(struct dgram_header) - sizeof(struct dgram_answer);
}

/* A get: the data's place in the segment (answered from there), or a status. */
static int32_t read_at(const struct dgram_request *rq, const void **data)
{
    if (rq->len == 0 || rq->len > get_room())
        return DS_EINVAL;
    if (!registry_contains(rq->addr, rq->len))
        return DS_EFAULT;
    *data = (const void *)(uintptr_t)rq->addr;
    return DS_OK;
}

static int32_t execute(int rank, const struct dgram_request *rq, const void *payload,
                       size_t payload_len, int64_t *value, const void **data)
{
    struct ds_message m = {.origin = rank,
                           .token = rq->seq,
                           .addr = rq->addr,
                           .len = rq->len,
                           .datatype = rq->datatype,
                           .rmw_op = rq->rmw_op,
                           .value = rq->value,
                           .target_local = rq->target_local};
    switch (rq->op) {
    case DGRAM_PUT:
        if (!registry_contains(rq->addr, rq->len))
            return DS_EFAULT;
        memcpy((void *)(uintptr_t)rq->addr, payload, payload_len);
        return DS_OK;
    case DGRAM_GET:
        return read_at(rq, data);
    case DGRAM_ACC:
        m.op = DS_ACC;
        memcpy(m.scale, rq->scale, sizeof(m.scale));
        return serve_acc(&m, payload, payload_len);
    case DGRAM_RMW:
        m.op = DS_RMW;
        return serve_rmw(&m, value);
    default: /* an unknown op, 5 and 6 too (once lock and unlock: locks go over RC only) */
        return DS_EINVAL;
    }
}

/*
 * Exactly once, in the client's one sequence space (engine.h): the next number
 * is executed and its answer kept; an older one is answered from the kept
 * answer (a get read again), never executed twice; a newer one is dropped
 * (its client sends it again after the ones before).
 */
static void serve_one(struct answer_batch *b, const struct dgram_request *rq, const void *payload,
                      size_t payload_len)
{
    struct engine_client *cl = b->client;
    uint64_t seq;
    if (!engine_widen(cl, rq->seq, &seq))
        return; /* before the client's first number */
    enum engine_verdict verdict = engine_check(cl, seq);
    const void *data = NULL;
#if ARMCI_MUTANT_IS(dgram_reexecute)
    if (verdict == ENGINE_DUPLICATE) /* the bug: a retransmitted request runs again */
        verdict = ENGINE_NEW;
#endif
    if (verdict == ENGINE_EARLY) {
        hybrid_stats.early++;
        return;
    }
    if (verdict == ENGINE_DUPLICATE) {
        int32_t status;
        int64_t value;
        /* Beyond a window behind the next number, its client has moved past it. */
        if (engine_next(cl) - seq > (uint64_t)cfg.hybrid_window ||
            !engine_kept(cl, seq, &status, &value))
            return;
        hybrid_stats.duplicates++;
        if (rq->op == DGRAM_GET) /* never kept: read again (the same request, sent again) */
            status = read_at(rq, &data);
        batch_add(b, rq->seq, status, value, data, data ? rq->len : 0);
        return;
    }
    int64_t value = 0;
    int32_t status = execute(b->rank, rq, payload, payload_len, &value, &data);
    engine_keep(cl, seq, status, value, true);
    engine_served(cl, seq);
    hybrid_stats.executed++;
    batch_add(b, rq->seq, status, value, data, data ? rq->len : 0);
}

static void refuse(const struct ud_sender *from, const char *why)
{
    hybrid_stats.refused++;
    ud_refuse(&sud, from, why);
}

static void on_datagram(void *ctx, const struct ud_sender *from, const void *bytes, size_t len);

static void replay(const struct ud_sender *from, const void *bytes, size_t len)
{
    on_datagram(NULL, from, bytes, len);
}

static void on_datagram(void *ctx, const struct ud_sender *from, const void *bytes, size_t len)
{
    (void)ctx;
    struct dgram_header h;
    const char *bad = dgram_read_header(bytes, len, DGRAM_REQUESTS, &h);
    if (bad) {
        refuse(from, bad);
        return;
    }
    if (h.rank < 0 || h.rank >= rt.nprocs) {
        refuse(from, "names no rank of this job");
        return;
    }
    struct verbs_addr a;
    if (!directory_client_data(h.rank, &a)) { /* asked of its holder meanwhile */
        directory_park(h.rank, from, bytes, len, replay);
        return;
    }
    if (!ud_sender_is(from, &a)) {
        refuse(from, "not sent by the UD data QP of the rank it names");
        return;
    }
    struct engine_client *cl = engine_of(h.rank);
    if (engine_first_datagram(cl))
        ud_grow_recv(&sud, DGRAM_SERVER_RECV_PER_CLIENT * ++ud_clients);
    engine_acked(cl, h.ack);
    struct answer_batch b = {
        .rank = h.rank, .client = cl, .len = sizeof(struct dgram_header), .buf = answer_buf};
    const uint8_t *p = (const uint8_t *)bytes + sizeof(h);
    size_t left = len - sizeof(h);
    for (int i = 0; i < h.count; i++) {
        struct dgram_request rq;
        if (left < sizeof(rq)) {
            refuse(from, "a request cut short");
            break;
        }
        memcpy(&rq, p, sizeof(rq));
        size_t payload = dgram_op_carries(rq.op) ? rq.len : 0;
        if (payload > left - sizeof(rq)) {
            refuse(from, "a request's data cut short");
            break;
        }
        serve_one(&b, &rq, p + sizeof(rq), payload);
        size_t step = dgram_step(sizeof(rq), payload);
        if (step >= left)
            break;
        p += step;
        left -= step;
    }
    batch_send(&b);
}

void dgram_server_init(void)
{
    on = cfg.hybrid_on;
    if (!on)
        return;
    size_t bytes = dgram_datagram_bytes();
    answer_buf = xmalloc(bytes);
    ud_create_data(&sud, &ds_res.sends, &ds_res.requests, "data server, data", bytes,
                   DGRAM_SERVER_SEND_BUFS, DGRAM_SERVER_RECV_PER_CLIENT, DGRAM_SERVER_RECV_BUFS,
                   on_datagram, NULL);
    directory_offer_server_data(sud.qp->qp_num);
}

void dgram_server_check_channel(void)
{
    if (on)
        ud_check(&sud);
}

void dgram_server_fini(void)
{
    if (!on)
        return;
    ud_destroy(&sud);
    ud_clients = 0;
    free(answer_buf);
    answer_buf = NULL;
    on = false;
}
