/*
 * Serves client messages. Nothing here trusts the message: the operation,
 * the sizes and every address range are checked against what the server
 * has registered before memory is touched; a bad request gets an error
 * reply and changes nothing.
 */
#include <errno.h>
#include <string.h>

#include "core/acc.h"
#include "core/mutant.h"
#include "core/error.h"
#include "core/node_shared.h"
#include "core/rmw_kernels.h"
#include "strided/stride.h"
#include "core/topology.h"
#include "core/wr_id.h"
#include "dataserver/handlers.h"
#include "dataserver/locks.h"
#include "dataserver/pulls.h"
#include "dataserver/registry.h"
#include "dataserver/answers.h"
#include "dataserver/sends.h"
#include "dataserver/engine.h"
#include "verbs/rc_qp.h"

/* Not an answer: the connection failed under the request (a pull that could not read the
 * client's data). It stays unexecuted, its number unused, for the client's replay to bring
 * again (DESIGN.md 10.1, rule 4). Never on the wire. */
#define DS_UNSERVED (-1)
/* Not an answer yet: a read of the client's data is in flight (pulls.h); serve_pulled ends
 * the request. Never on the wire. */
#define DS_PENDING (-2)

/* The node-local process whose memory a request targets (for its accumulate lock). */
static bool target_local_index(const struct ds_message *rq, int *local)
{
    int n = topo_node_nprocs(topo.my_node);
    if (rq->target_local < 0 || rq->target_local >= n)
        return false;
    *local = rq->target_local;
    return true;
}

int serve_acc(const struct ds_message *rq, const void *data, size_t payload)
{
    size_t elem = acc_elem_size(rq->datatype);
    int local;
    if (!elem || rq->len != payload || rq->len % elem || !target_local_index(rq, &local))
        return DS_EINVAL;
    if (!registry_contains(rq->addr, rq->len))
        return DS_EFAULT;
    node_acc_lock(local);
    acc_apply(rq->datatype, rq->scale, (void *)(uintptr_t)rq->addr, data, rq->len);
    node_acc_unlock(local);
    return DS_OK;
}

int serve_rmw(const struct ds_message *rq, int64_t *old)
{
    size_t size = rmw_operand_size(rq->rmw_op);
    if (!size || rq->len != size || rq->addr % size)
        return DS_EINVAL;
    if (!registry_contains(rq->addr, size))
        return DS_EFAULT;
    *old = rmw_apply(rq->rmw_op, (void *)(uintptr_t)rq->addr, (long)rq->value);
    return DS_OK;
}

/* The server-side layout of a packed transfer, checked; its extent in *extent. */
static bool packed_layout(const struct ds_message *rq, struct stride_desc *d, size_t *extent,
                          size_t *packed)
{
    const struct ds_stride *s = &rq->stride;
    if (s->levels < 0 || s->levels > ARMCI_MAX_STRIDE_LEVEL)
        return false;
    if (!stride_side_valid(s->stride, s->count, s->levels))
        return false;
    *d = (struct stride_desc){s->levels, s->count, NULL, s->stride};
    *extent = stride_extent(s->stride, s->count, s->levels);
    *packed = (size_t)s->count[0] * stride_chunks(s->count, s->levels);
    return true;
}

/* Scatters (put/acc) the packed payload `data` over the strided region at addr. */
static int do_unpack(const struct ds_message *rq, const void *data, size_t payload, bool accumulate)
{
    struct stride_desc d;
    size_t extent, packed;
    if (!packed_layout(rq, &d, &extent, &packed) || packed != payload || rq->len != payload)
        return DS_EINVAL;
    int local = 0;
    size_t elem = accumulate ? acc_elem_size(rq->datatype) : 1;
    if (accumulate && (!elem || d.count[0] % (int)elem || !target_local_index(rq, &local)))
        return DS_EINVAL;
    if (!registry_contains(rq->addr, extent))
        return DS_EFAULT;

    char *base = (char *)(uintptr_t)rq->addr;
    const char *src = data;
    size_t chunk = (size_t)d.count[0];
    struct stride_iter it;
    if (accumulate)
        node_acc_lock(local);
    for (stride_iter_begin(&it, &d); !it.done; stride_iter_next(&it), src += chunk) {
        if (accumulate)
            acc_apply(rq->datatype, rq->scale, base + it.dst_off, src, chunk);
        else
            memcpy(base + it.dst_off, src, chunk);
#if ARMCI_MUTANT_IS(acc_twice)
        if (accumulate)
            acc_apply(rq->datatype, rq->scale, base + it.dst_off, src, chunk);
#endif
    }
    if (accumulate)
        node_acc_unlock(local);
    return DS_OK;
}

/* RDMA-writes `bytes` of o to where the message asked; the reply follows on the same QP. */
static void server_write_back(struct server_conn *sc, struct pool_buffer *o, size_t bytes,
                              const struct ds_message *rq)
{
    o->owner = sc;
    struct ibv_sge sge = {.addr = (uintptr_t)o->addr, .length = (uint32_t)bytes, .lkey = o->lkey};
    struct ibv_send_wr wr = {
        .wr_id = wr_id_make((uintptr_t)o, WR_TAG_OUTBUF),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_SIGNALED,
        .wr = {.rdma = {.remote_addr = rq->reply_addr, .rkey = rq->reply_rkey}},
    };
    /* RC order: the data lands before the reply that follows it. */
    server_reserve_sends(sc, 2);
    server_post_send(sc, &wr);
}

/* The gather list over a region's chunks, in place in the segment (lkey its registration's). */
static int region_sges(const struct ds_message *rq, const struct stride_desc *d, uint32_t lkey,
                       struct ibv_sge *sge)
{
    int n = 0;
    struct stride_iter it;
    for (stride_iter_begin(&it, d); !it.done; stride_iter_next(&it))
        sge[n++] = (struct ibv_sge){
            .addr = rq->addr + it.dst_off, .length = (uint32_t)d->count[0], .lkey = lkey};
    return n;
}

/*
 * One RDMA write whose gather list is the region's chunks, in place in the
 * segment: nothing is copied here. The reply follows on the same QP.
 */
static void write_back_gathered(struct server_conn *sc, const struct ds_message *rq,
                                const struct stride_desc *d, uint32_t lkey)
{
    struct ibv_sge sge[RC_QP_MAX_SGE];
    int n = region_sges(rq, d, lkey, sge);
    struct ibv_send_wr wr = {
        .wr_id = wr_id_make((uintptr_t)sc, WR_TAG_POINTER),
        .sg_list = sge,
        .num_sge = n,
        .opcode = IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_SIGNALED,
        .wr = {.rdma = {.remote_addr = rq->reply_addr, .rkey = rq->reply_rkey}},
    };
    server_reserve_sends(sc, 2);
    server_post_send(sc, &wr);
}

/* Gathers the strided region and RDMA-writes it to the client: straight from the segment when
 * the chunks fit one gather list, else through a registered buffer. */
static int do_get_packed(struct server_conn *sc, const struct ds_message *rq)
{
    struct stride_desc d;
    size_t extent, packed;
    if (!packed_layout(rq, &d, &extent, &packed) || packed != rq->len)
        return DS_EINVAL;
    bool gathered = stride_chunks(d.count, d.levels) <= (size_t)sc->max_sge;
    if (!gathered && packed > server_out_buf_size())
        return DS_EINVAL;
    uint32_t lkey;
    if (!registry_lkey(rq->addr, extent, &lkey))
        return DS_EFAULT;
    if (gathered) {
        write_back_gathered(sc, rq, &d, lkey);
        return DS_OK;
    }

    struct pool_buffer *o = server_out_buf_get();
    const char *base = (const char *)(uintptr_t)rq->addr;
    char *dst = o->addr;
    size_t chunk = (size_t)d.count[0];
    struct stride_iter it;
    for (stride_iter_begin(&it, &d); !it.done; stride_iter_next(&it), dst += chunk)
        memcpy(dst, base + it.dst_off, chunk);

    server_write_back(sc, o, packed, rq);
    return DS_OK;
}

/*
 * A strided put whose data the client left in place: one RDMA read from the
 * client straight into the region's chunks, served when it completes
 * (serve_pulled); the connection's next requests wait for it (pulls.h), as
 * the next one may touch the same bytes.
 */
static int do_put_pull(struct server_conn *sc, const struct ds_message *rq, size_t payload)
{
    struct stride_desc d;
    size_t extent, packed;
    if (payload || !packed_layout(rq, &d, &extent, &packed) || packed != rq->len ||
        stride_chunks(d.count, d.levels) > (size_t)sc->max_sge)
        return DS_EINVAL;
    uint32_t lkey;
    if (!registry_lkey(rq->addr, extent, &lkey))
        return DS_EFAULT;
    struct ibv_sge sge[RC_QP_MAX_SGE];
    int n = region_sges(rq, &d, lkey, sge);
    return pull_start(sc, rq, sge, n, NULL, 0) ? DS_UNSERVED : DS_PENDING;
}

/* I/O vectors: `value` segments of `len` bytes at the addresses leading the payload. */
static int do_iov(struct server_conn *sc, const struct ds_message *rq, const void *payload_data,
                  size_t payload)
{
    if (rq->value <= 0 || rq->value > (int64_t)(payload / sizeof(uint64_t)) || rq->len == 0)
        return DS_EINVAL;
    size_t k = (size_t)rq->value, len = (size_t)rq->len, total, expected;
    const uint64_t *addrs = payload_data;
    /* Sizes that wrap around would pass the checks below with a tiny payload. */
    if (__builtin_mul_overflow(k, len, &total) ||
        __builtin_add_overflow(k * sizeof(uint64_t), rq->op == DS_GET_IOV ? 0 : total, &expected) ||
        payload != expected)
        return DS_EINVAL;
    int local = 0;
    if (rq->op == DS_ACC_IOV) {
        size_t elem = acc_elem_size(rq->datatype);
        if (!elem || len % elem || !target_local_index(rq, &local))
            return DS_EINVAL;
    }
    if (rq->op == DS_GET_IOV && total > server_out_buf_size())
        return DS_EINVAL;
    for (size_t i = 0; i < k; i++)
        if (!registry_contains(addrs[i], len))
            return DS_EFAULT;

    const char *data = (const char *)(addrs + k);
    if (rq->op == DS_PUT_IOV) {
        for (size_t i = 0; i < k; i++)
            memcpy((void *)(uintptr_t)addrs[i], data + i * len, len);
        return DS_OK;
    }
    if (rq->op == DS_ACC_IOV) {
        node_acc_lock(local);
        for (size_t i = 0; i < k; i++)
            acc_apply(rq->datatype, rq->scale, (void *)(uintptr_t)addrs[i], data + i * len, len);
        node_acc_unlock(local);
        return DS_OK;
    }
    struct pool_buffer *o = server_out_buf_get();
    for (size_t i = 0; i < k; i++)
        memcpy((char *)o->addr + i * len, (const void *)(uintptr_t)addrs[i], len);
    server_write_back(sc, o, total, rq);
    return DS_OK;
}

/* Answers request rq: `ends_send`, the last request of its SEND (its answer returns the SEND's
 * credit). Updates that succeeded are answered in batches; the rest at once (a pull too: its
 * client waits for the answer to reuse its buffer). */
static void answer_request(struct server_conn *sc, const struct ds_message *rq, int status,
                           int64_t value, bool ends_send)
{
    if (!ends_send) {
        server_answer_shared(sc, rq->token, status);
        return;
    }
    bool batched = ds_op_is_update(rq->op) && rq->op != DS_PUT_PULL;
    server_answer(sc, rq->token, status, value, batched && status == DS_OK);
}

/* Executes one new request whose `payload` bytes are at data; DS_QUEUED or a lock's grant
 * means it answered itself (a lock). */
static int execute(struct server_conn *sc, struct ds_message *rq, const void *data, size_t payload,
                   int64_t *value)
{
    switch (rq->op) {
    case DS_ACC:
        return serve_acc(rq, data, payload);
    case DS_RMW:
        return serve_rmw(rq, value);
    case DS_PUT_PACKED:
        return do_unpack(rq, data, payload, false);
    case DS_ACC_PACKED:
        return do_unpack(rq, data, payload, true);
    case DS_GET_PACKED:
        return do_get_packed(sc, rq);
    case DS_PUT_PULL:
        return do_put_pull(sc, rq, payload);
    case DS_PUT_IOV:
    case DS_GET_IOV:
    case DS_ACC_IOV:
        return do_iov(sc, rq, data, payload);
    default:
        return DS_EINVAL;
    }
}

/*
 * A pulled request (DS_PULLED): an update whose SEND was its header alone,
 * the payload its op and sizes imply waiting at the client. Read into an
 * out buffer, then served from there (serve_pulled), the connection's next
 * requests waiting until then. A payload bigger than an out buffer is
 * malformed (a client cuts pieces to fit).
 */
static int execute_pulled(struct server_conn *sc, struct ds_message *rq, size_t sent)
{
    size_t payload;
    if (sent || !ds_op_shares_send(rq->op) || !ds_shared_payload(rq, &payload) || payload == 0 ||
        payload > server_out_buf_size())
        return DS_EINVAL;
    struct pool_buffer *o = server_out_buf_get();
#if ARMCI_MUTANT_IS(pulled_unread)
    serve_pulled(sc, rq, o, payload, IBV_WC_SUCCESS); /* the bug: whatever the buffer held */
    return DS_PENDING;
#endif
    struct ibv_sge into = {
        .addr = (uintptr_t)o->addr, .length = (uint32_t)payload, .lkey = o->lkey};
    if (pull_start(sc, rq, &into, 1, o, payload) == 0)
        return DS_PENDING;
    server_out_buf_put(o);
    return DS_UNSERVED;
}

/* The end of a new request: `status` DS_UNSERVED leaves it for the replay; otherwise it is
 * served (its number used, a refusal's or an Rmw's answer kept) and answered. */
static void finish_request(struct server_conn *sc, const struct ds_message *rq, int status,
                           int64_t value, bool ends_send)
{
    if (status == DS_UNSERVED) {
        engine_count_unserved();
        return; /* no answer: the connection that would carry it failed */
    }
    engine_served(sc->engine, rq->seq);
    if (rq->op == DS_RMW || status != DS_OK)
        engine_keep(sc->engine, rq->seq, status, value, false);
    answer_request(sc, rq, status, value, ends_send);
}

void serve_pulled(struct server_conn *sc, struct ds_message *rq, struct pool_buffer *out,
                  size_t payload, int wc_status)
{
    /* The client's memory refused the read (its address or key): the request's fault. Any
     * other failure is the connection's, which the client replaces and replays it on. */
    int status = wc_status == IBV_WC_SUCCESS          ? DS_OK
                 : wc_status == IBV_WC_REM_ACCESS_ERR ? DS_EFAULT
                                                      : DS_UNSERVED;
#if ARMCI_MUTANT_IS(pull_failure_kept)
    if (status == DS_UNSERVED && !out)
        status = DS_EFAULT; /* the bug: a broken read into place answered as the client's fault */
#endif
#if ARMCI_MUTANT_IS(pulled_failure_served)
    if (status == DS_UNSERVED && out)
        status = DS_OK; /* the bug: what the broken read left is applied, its number used */
#endif
    int64_t value = 0;
    if (status == DS_OK && out)
        status = execute(sc, rq, out->addr, payload, &value);
    if (out)
        server_out_buf_put(out);
    finish_request(sc, rq, status, value, true); /* a pull ends its SEND (serve_message) */
}

/*
 * A request served before, sent again after its connection broke
 * (engine.h): answered as it was, never applied again. A get is read
 * again (its data may not have reached the client); a lock answers from its
 * state (locks.h); an Rmw, an unlock or a refusal from the kept answer; an
 * update that was not refused succeeded.
 */
static void serve_replay(struct server_conn *sc, struct ds_message *rq, size_t payload,
                         bool ends_send)
{
    engine_count_duplicate();
    int64_t value = 0;
    int status = DS_OK;
    if (rq->op == DS_LOCK) {
        if (lock_replayed(sc, rq))
            return;
        if (!engine_kept(sc->engine, rq->seq, &status, &value)) {
            armci_warn("data server: rank %d replayed lock request %llu, which it no longer "
                       "waits for",
                       sc->client, (unsigned long long)rq->seq);
            status = DS_EINVAL;
        }
        server_answer_lock(sc, rq->token, status, false);
        return;
    }
    if (rq->op == DS_GET_PACKED || rq->op == DS_GET_IOV) {
        status = execute(sc, rq, rq + 1, payload, &value);
    } else if (!engine_kept(sc->engine, rq->seq, &status, &value) &&
               (rq->op == DS_RMW || rq->op == DS_UNLOCK)) {
        armci_warn("data server: rank %d replayed request %llu, whose answer is no longer kept",
                   sc->client, (unsigned long long)rq->seq);
        status = DS_EINVAL;
    }
    answer_request(sc, rq, status, value, ends_send);
}

/* Serves one request with `payload` bytes behind its header; `ends_send`: the last request of
 * its SEND. Only the client's next request is served; an older one is a replay. */
static void serve_request(struct server_conn *sc, struct ds_message *rq, size_t payload,
                          bool ends_send)
{
    switch (engine_check(sc->engine, rq->seq)) {
    case ENGINE_DUPLICATE:
#if !ARMCI_MUTANT_IS(replay_applied_twice)
        serve_replay(sc, rq, payload, ends_send);
        return;
#else
        break;
#endif
    case ENGINE_EARLY:
        /* Behind a request that a failing connection left unserved: the client's replay brings
         * both again, in order. On a working connection a gap is the client's mistake. */
        if (sc->broken)
            return;
        armci_warn("data server: rank %d skipped request numbers (got %llu): refused", sc->client,
                   (unsigned long long)rq->seq);
        answer_request(sc, rq, DS_EINVAL, 0, ends_send);
        return;
    case ENGINE_NEW:
        break;
    }
    int64_t value = 0;
    int status;
    if (rq->op == DS_LOCK) {
        engine_served(sc->engine, rq->seq);
        status = lock_request(sc, rq); /* answers itself, at once or when granted */
        if (status != DS_OK && status != DS_QUEUED)
            engine_keep(sc->engine, rq->seq, status, 0, false);
        return;
    }
    if (rq->op == DS_UNLOCK) {
        engine_served(sc->engine, rq->seq);
        status = unlock_request(sc, rq);
        engine_keep(sc->engine, rq->seq, status, 0, false);
        return;
    }
    if (rq->flags & DS_PULLED)
        status = execute_pulled(sc, rq, payload);
    else
        status = execute(sc, rq, rq + 1, payload, &value);
    if (status == DS_PENDING)
        return; /* served when its read completes (serve_pulled) */
    finish_request(sc, rq, status, value, ends_send);
}

/*
 * Serves the requests of one SEND in turn (protocol.h). A request that says
 * another follows must be an update whose implied payload leaves room for
 * the next header; otherwise it is refused and ends the SEND (its answer
 * returns the credit: what follows is not served).
 */
void serve_message(struct server_conn *sc, struct ds_message *rq, size_t bytes)
{
    if (bytes < sizeof(*rq)) {
        armci_warn("data server: dropped a %zu-byte request from rank %d (too short)", bytes,
                   sc->client);
        return; /* not even a token to answer */
    }
    for (;;) {
        if (!(rq->flags & DS_MORE)) {
            serve_request(sc, rq, bytes - sizeof(*rq), true);
            return;
        }
        size_t payload, step;
        if (!ds_shared_payload(rq, &payload) || payload > bytes - sizeof(*rq) ||
            (step = ds_shared_step(payload)) + sizeof(*rq) > bytes) {
#if !ARMCI_MUTANT_IS(shared_refusal_unanswered)
            server_answer(sc, rq->token, DS_EINVAL, 0, false);
#endif
            return;
        }
        serve_request(sc, rq, payload, false);
        rq = (struct ds_message *)((char *)rq + step);
        bytes -= step;
    }
}
