/*
 * Fuzz target `dgram`: the data server's side of the hybrid UD data path
 * (dataserver/dgram_server.c: the parser on_datagram, the exactly-once
 * serve_one, execute, the answer batches), with the real registry,
 * serve_acc/serve_rmw (handlers.c), stride walker and kernels on the ds
 * target's segments and canaries (arena.c). Test doubles stand in
 * for the UD endpoint: ud_create_data keeps the receive callback, which the
 * harness calls with each datagram and a sender address; ud_sender_is
 * compares that address with the directory's, so the input decides whether
 * the sender is the rank the header names or another one; ud_send_bytes
 * records the answers (or refuses them for want of a buffer).
 *
 * Input (fuzz.h, FUZZ_DGRAM_*): a world byte (MTU, window), then datagrams,
 * each [u8 ctl] ([u16 len] unless FUZZ_DGRAM_NATURAL) [len bytes]. The
 * server is fresh for every input: every client's numbers start at 0.
 *
 * The harness keeps its own model of the server: per client the number it
 * executes next and the answers of the last window, and the segments'
 * expected contents. After every datagram it checks: the canaries are intact
 * and no accumulate lock is held; a forged or malformed header is refused
 * once, changes no byte, no state and gets no answer; every answer datagram
 * goes to a rank's data QP and is well formed (magic, kind DGRAM_ANSWERS,
 * this node, count answers each fitting, their bytes adding up to its
 * length, at most the datagram size), a send refused for want of a buffer is
 * retried once with the same bytes; first come the answers to the datagram,
 * all to the rank its header names, naming only numbers of its requests, in
 * order: the expected number is executed (its status exactly as the
 * registry and the kernels' rules say; an op the server does not serve,
 * ops 5 and 6 (once lock and unlock: locks go over RC only) among them, is
 * executed as a refusal, DS_EINVAL, and changes nothing, not even on a
 * mutex of the lock block), an older one of the last window is answered
 * again from the cache (a get read again) and never executed, anything else
 * gets no answer; the ack is past every number answered and ends at the
 * model's next number; no other answer is sent (no DS_QUEUED, no grant).
 * Memory changed only where an executed put (its exact bytes), accumulate
 * or Rmw did (a datagram of old numbers only, such as a second delivery,
 * changes nothing), a get returns the bytes the model holds, an Rmw the old
 * value.
 */
#include <stddef.h>
#include <string.h>

#include "arena.h"
#include "core/acc.h"
#include "core/config.h"
#include "core/hybrid_stats.h"
#include "core/recovery_stats.h"
#include "core/memstat.h"
#include "core/rmw_kernels.h"
#include "core/topology.h"
#include "dataserver/answers.h"
#include "wire/dgram_protocol.h"
#include "dataserver/dgram_server.h"
#include "dataserver/engine.h"
#include "wire/protocol.h"
#include "dataserver/resources.h"
#include "dataserver/sends.h"
#include "fuzz.h"
#include "odcm/directory.h"
#include "odcm/ud.h"
#include "verbs/device.h"

#define NPROCS     8
#define WINDOW_MAX 8
#define MAX_SENT   1024 /* answer datagrams to one datagram: at most one per request */

struct config cfg = {.hybrid_on = true, .hybrid_size = FUZZ_DGRAM_SIZE, .hybrid_window = 8};
struct verbs_device vdev = {.mtu = IBV_MTU_4096};
struct server_resources ds_res;
struct hybrid_stats hybrid_stats;
struct recovery_stats recovery_stats;
static bool verbose; /* FUZZ_VERBOSE=1: what each datagram got (to check a corpus) */

/* ---- the UD endpoint and the directory ---- */

static struct ibv_qp server_qp = {.qp_num = 0x400};
static struct ud_endpoint *server_ud; /* what ud_create_data made */
static size_t datagram_bytes;

/* A rank's UD data QP: its own number, its node's LID. */
static struct verbs_addr client_data_addr(int rank)
{
    return (struct verbs_addr){.lid = (uint16_t)(1 + rank / 4), .qpn = 0x300u + (uint32_t)rank};
}

struct verbs_addr directory_client_data(int rank)
{
    FUZZ_CHECK(rank >= 0 && rank < NPROCS, "the directory asked for rank %d", rank);
    return client_data_addr(rank);
}

void directory_offer_server_data(uint32_t qpn)
{
    FUZZ_CHECK(qpn == server_qp.qp_num, "offered QP %u, not the endpoint's", qpn);
}

void ud_create_data(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
                    const char *who, size_t datagram, int nsend, int nrecv, ud_bytes_fn fn,
                    void *ctx)
{
    FUZZ_CHECK(!server_ud, "a second data endpoint");
    FUZZ_CHECK(send_ep == &ds_res.sends && recv_ep == &ds_res.requests && nsend > 0 && nrecv > 0,
               "the endpoint is not on the server's CQs");
    FUZZ_CHECK(datagram == dgram_size(cfg.hybrid_size, (int)vdev.mtu),
               "datagrams of %zu bytes, not the configured size cut to the MTU", datagram);
    *u = (struct ud_endpoint){.who = who, .qp = &server_qp, .on_bytes = fn, .ctx = ctx};
    server_ud = u;
    datagram_bytes = datagram;
}

/* The model's QP never fails. */
void ud_check(struct ud_endpoint *u)
{
    FUZZ_CHECK(u == server_ud, "checking another endpoint");
}

void ud_destroy(struct ud_endpoint *u)
{
    FUZZ_CHECK(u == server_ud, "destroying another endpoint");
    server_ud = NULL;
}

bool ud_sender_is(const struct ud_sender *from, const struct verbs_addr *a)
{
    return from->qpn == a->qpn && from->lid == a->lid;
}

/* What the datagram being served did. */
static const struct ud_sender *cur_from;
static int cur_rank; /* the rank its header names */
static int nrefused;
static uint8_t send_mode; /* FUZZ_DGRAM_BUSY, FUZZ_DGRAM_LOST */
static uint8_t sent[MAX_SENT][FUZZ_DGRAM_SIZE];
static size_t sent_len[MAX_SENT];
static int sent_to[MAX_SENT]; /* the rank */
static int nsent;
static bool retry_due, drained;

void ud_refuse(struct ud_endpoint *u, const struct ud_sender *from, const char *why)
{
    FUZZ_CHECK(u == server_ud && from == cur_from, "a refusal on another endpoint or sender");
    if (verbose)
        printf("    refused: %s\n", why);
    nrefused++;
}

/* The send CQ drained: completions give send buffers back. */
void server_drain_sends(void)
{
    drained = true;
}

/* A well-formed datagram of answers from this node: count answers, each fitting, their
 * bytes (8-byte steps) adding up to its length. */
static void check_answer_datagram(const uint8_t *d, size_t len)
{
    struct dgram_header h;
    FUZZ_CHECK(len >= sizeof(h) && len <= datagram_bytes,
               "an answer datagram of %zu bytes (datagrams: %zu)", len, datagram_bytes);
    memcpy(&h, d, sizeof(h));
    FUZZ_CHECK(h.magic == DGRAM_MAGIC && h.kind == DGRAM_ANSWERS && h.rank == topo.my_node,
               "answer header: magic 0x%x, kind %d, node %d", h.magic, h.kind, h.rank);
    FUZZ_CHECK(h.count > 0, "an answer datagram of no answers");
    size_t at = sizeof(h);
    for (int i = 0; i < h.count; i++) {
        struct dgram_answer a;
        FUZZ_CHECK(len - at >= sizeof(a), "answer %d of %d past the datagram's end", i, h.count);
        memcpy(&a, d + at, sizeof(a));
        FUZZ_CHECK(a.len <= len - at - sizeof(a), "answer %d: %u data bytes, %zu left", i, a.len,
                   len - at - sizeof(a));
        FUZZ_CHECK(a.status == DS_OK || a.status == DS_EFAULT || a.status == DS_EINVAL,
                   "answer status %d", a.status);
        FUZZ_CHECK(a.len == 0 || a.status == DS_OK, "a refused request's answer carries data");
        at += dgram_step(sizeof(a), a.len);
    }
    FUZZ_CHECK(at == len, "%d answers take %zu bytes of a datagram of %zu", h.count, at, len);
}

bool ud_send_bytes(struct ud_endpoint *u, int peer_key, const struct verbs_addr *to,
                   const void *data, size_t len)
{
    FUZZ_CHECK(u == server_ud && peer_key >= 0 && peer_key < NPROCS,
               "answers sent to peer %d of a job of %d", peer_key, NPROCS);
    struct verbs_addr want = client_data_addr(peer_key);
    FUZZ_CHECK(to->qpn == want.qpn && to->lid == want.lid,
               "answers to rank %d sent to QP 0x%x, LID %u", peer_key, to->qpn, to->lid);
    bool retry = retry_due;
    if (retry) {
        FUZZ_CHECK(drained && peer_key == sent_to[nsent - 1] && len == sent_len[nsent - 1] &&
                       !memcmp(data, sent[nsent - 1], len),
                   "a send retried without draining the send CQ, or with other bytes");
        retry_due = false;
    } else {
        FUZZ_CHECK(nsent < MAX_SENT, "more than %d answer datagrams", MAX_SENT);
        check_answer_datagram(data, len);
        memcpy(sent[nsent], data, len);
        sent_to[nsent] = peer_key;
        sent_len[nsent++] = len;
    }
    drained = false;
    bool ok = !(send_mode & FUZZ_DGRAM_LOST) && (retry || !(send_mode & FUZZ_DGRAM_BUSY));
    retry_due = !ok && !retry;
    return ok;
}

/* handlers.c's connection side: serve_acc and serve_rmw, all the UD path runs, use none. */
static void not_over_ud(const char *what)
{
    FUZZ_CHECK(0, "a datagram reached %s", what);
}

void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait)
{
    not_over_ud("server_answer");
}

void server_answer_shared(struct server_conn *sc, uint64_t token, int status)
{
    not_over_ud("server_answer_shared");
}

void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued)
{
    not_over_ud("server_answer_lock");
}

void server_lock_queued(struct server_conn *sc, uint64_t token)
{
    not_over_ud("server_lock_queued");
}

void server_reserve_sends(struct server_conn *sc, int n)
{
    not_over_ud("server_reserve_sends");
}

size_t server_out_buf_size(void)
{
    not_over_ud("server_out_buf_size");
    return 0;
}

struct pool_buffer *server_out_buf_get(void)
{
    not_over_ud("server_out_buf_get");
    return NULL;
}

int server_pull(struct server_conn *sc, const struct ibv_sge *into, int n, uint64_t raddr,
                uint32_t rkey)
{
    not_over_ud("server_pull");
    return -1;
}

void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr)
{
    not_over_ud("server_post_send");
}

/* ---- the model ---- */

struct model_answer {
    uint32_t seq;
    int32_t status;
    int64_t value;
    uint8_t op;
};

/* Per client: the number executed next, the last window's answers by number % window. */
static struct model_client {
    uint32_t expected;
    struct model_answer cache[WINDOW_MAX];
} model[NPROCS];

/* The segments as they should be (where `known`), by arena offset. */
static uint8_t shadow[ARENA_SIZE];
static bool known[ARENA_SIZE];

/* Whether [addr, addr + len) lies in one segment (registry_contains, independently). */
static bool in_segment(uint64_t addr, uint64_t len)
{
    for (int i = 0; i < ARENA_NSEGS; i++) {
        uint64_t base = (uintptr_t)arena + arena_segs[i].offset, size = arena_segs[i].size;
        if (addr >= base && addr - base < size && len <= base + size - addr)
            return true;
    }
    return false;
}

/* Only for ranges in a segment. */
static void forget(uint64_t addr, size_t len)
{
    memset(known + (addr - (uintptr_t)arena), 0, len);
}

static bool all_known(uint64_t addr, size_t len)
{
    size_t off = addr - (uintptr_t)arena;
    for (size_t i = 0; i < len; i++)
        if (!known[off + i])
            return false;
    return true;
}

/* The bytes at [addr, addr + len) (in a segment) are the model's where it knows them. */
static bool matches(uint64_t addr, const uint8_t *bytes, size_t len)
{
    size_t off = addr - (uintptr_t)arena;
    for (size_t i = 0; i < len; i++)
        if (known[off + i] && shadow[off + i] != bytes[i])
            return false;
    return true;
}

/* The status execute must give, by the rules of read_at, serve_acc and serve_rmw. */
static int32_t expected_status(const struct dgram_request *rq)
{
    size_t room = datagram_bytes - sizeof(struct dgram_header) - sizeof(struct dgram_answer);
    size_t elem = acc_elem_size(rq->datatype), size = rmw_operand_size(rq->rmw_op);
    switch (rq->op) {
    case DGRAM_PUT:
        return in_segment(rq->addr, rq->len) ? DS_OK : DS_EFAULT;
    case DGRAM_GET:
        if (rq->len == 0 || rq->len > room)
            return DS_EINVAL;
        return in_segment(rq->addr, rq->len) ? DS_OK : DS_EFAULT;
    case DGRAM_ACC:
        if (!elem || rq->len % elem || rq->target_local < 0 || rq->target_local >= 4)
            return DS_EINVAL;
        return in_segment(rq->addr, rq->len) ? DS_OK : DS_EFAULT;
    case DGRAM_RMW:
        if (!size || rq->len != size || rq->addr % size)
            return DS_EINVAL;
        return in_segment(rq->addr, size) ? DS_OK : DS_EFAULT;
    case DGRAM_RESERVED_5: /* once lock and unlock, on a mutex or not: refused, as */
    case DGRAM_RESERVED_6: /* any other op the server does not serve */
    default:
        return DS_EINVAL;
    }
}

/* The answers the server sent while serving a datagram, in order. */
struct answer_ref {
    struct dgram_answer a;
    const uint8_t *data;
    uint32_t ack; /* of its datagram */
    int dgram;    /* its datagram, in sent[] */
};
static struct answer_ref answers[MAX_SENT];
static int nanswers, next_answer;

static void collect_answers(void)
{
    nanswers = next_answer = 0;
    for (int k = 0; k < nsent; k++) {
        struct dgram_header h;
        memcpy(&h, sent[k], sizeof(h));
        size_t at = sizeof(h);
        for (int i = 0; i < h.count; i++) {
            FUZZ_CHECK(nanswers < MAX_SENT, "more than %d answers", MAX_SENT);
            struct answer_ref *r = &answers[nanswers++];
            memcpy(&r->a, sent[k] + at, sizeof(r->a));
            r->data = sent[k] + at + sizeof(r->a);
            r->ack = h.ack;
            r->dgram = k;
            FUZZ_CHECK((int32_t)(h.ack - r->a.seq) > 0, "answer %u in a datagram acking %u",
                       r->a.seq, h.ack);
            at += dgram_step(sizeof(r->a), r->a.len);
        }
    }
}

/* The next answer must be to rq, as it comes, and go to its sender. */
static const struct dgram_answer *answer_to(const struct dgram_request *rq, const uint8_t **data)
{
    FUZZ_CHECK(next_answer < nanswers, "request %u (op %d) got no answer", rq->seq, rq->op);
    const struct answer_ref *r = &answers[next_answer++];
    FUZZ_CHECK(r->a.seq == rq->seq, "answer to %u where %u was due", r->a.seq, rq->seq);
    FUZZ_CHECK(sent_to[r->dgram] == cur_rank, "the answer to rank %d's request %u sent to rank %d",
               cur_rank, rq->seq, sent_to[r->dgram]);
    *data = r->data;
    return &r->a;
}

/* A get's answer: its exact length, the bytes the model holds. */
static void check_get_data(const struct dgram_request *rq, const struct dgram_answer *a,
                           const uint8_t *data)
{
    if (a->status != DS_OK) {
        FUZZ_CHECK(a->len == 0, "a refused get carries data");
        return;
    }
    FUZZ_CHECK(a->len == rq->len, "a get of %u bytes answered with %u", rq->len, a->len);
    FUZZ_CHECK(matches(rq->addr, data, a->len), "a get of seq %u returned other bytes", rq->seq);
}

/* The model of serve_one and execute for one request of a verified client. */
static int model_one(int rank, const struct dgram_request *rq, const uint8_t *payload)
{
    struct model_client *mc = &model[rank];
    uint32_t window = (uint32_t)cfg.hybrid_window;
    uint32_t behind = mc->expected - rq->seq;
    struct model_answer *c = &mc->cache[rq->seq % window];
    const uint8_t *data;
    if ((int32_t)(rq->seq - mc->expected) > 0)
        return 0; /* early: dropped */
    if (behind > 0) {
        if (behind > window || behind > mc->expected)
            return 0; /* before the window: no answer */
        FUZZ_CHECK(c->seq == rq->seq, "model: cache slot of %u holds %u", rq->seq, c->seq);
        const struct dgram_answer *a = answer_to(rq, &data);
        FUZZ_CHECK(a->value == c->value, "a repeated answer to %u changed its value", rq->seq);
        if (c->op == DGRAM_GET) {
            /* Read again where the retransmission says, whatever its op. */
            struct dgram_request get = *rq;
            get.op = DGRAM_GET;
            FUZZ_CHECK(a->status == expected_status(&get), "a get read again: status %d",
                       a->status);
            check_get_data(&get, a, data);
        } else {
            FUZZ_CHECK(a->status == c->status && a->len == 0,
                       "a repeated answer to %u: status %d, %u bytes (first: status %d)", rq->seq,
                       a->status, a->len, c->status);
        }
        return 0;
    }
    const struct dgram_answer *a = answer_to(rq, &data);
    int32_t status = expected_status(rq);
    FUZZ_CHECK(a->status == status, "op %d, seq %u: status %d, not %d", rq->op, rq->seq, a->status,
               status);
    size_t size = rmw_operand_size(rq->rmw_op);
    if (rq->op == DGRAM_RMW && status == DS_OK) {
        size_t off = rq->addr - (uintptr_t)arena;
        int64_t old = 0;
        if (size == sizeof(int32_t)) {
            int32_t v;
            memcpy(&v, shadow + off, sizeof(v));
            old = v;
        } else {
            memcpy(&old, shadow + off, sizeof(old));
        }
        FUZZ_CHECK(!all_known(rq->addr, size) || a->value == old,
                   "an Rmw answered %lld, the old value was %lld", (long long)a->value,
                   (long long)old);
        forget(rq->addr, size);
    } else {
        FUZZ_CHECK(a->value == 0, "op %d answered a value", rq->op);
    }
    if (rq->op == DGRAM_GET)
        check_get_data(rq, a, data);
    else
        FUZZ_CHECK(a->len == 0, "op %d answered with data", rq->op);
    if (rq->op == DGRAM_PUT && status == DS_OK) {
        size_t off = rq->addr - (uintptr_t)arena;
        memcpy(shadow + off, payload, rq->len);
        memset(known + off, 1, rq->len);
    }
    if (rq->op == DGRAM_ACC && status == DS_OK)
        forget(rq->addr, rq->len);
    *c = (struct model_answer){.seq = rq->seq, .status = status, .value = a->value, .op = rq->op};
    mc->expected++;
    return 1;
}

/* ---- the harness ---- */

static void model_reset(void)
{
    memset(model, 0, sizeof(model));
}

/* Delivers one datagram (its bytes exactly: reading past them is out of bounds) and checks
 * what the server did. */
static void deliver(uint8_t ctl, const uint8_t *bytes, size_t len)
{
    struct dgram_header h = {0};
    memcpy(&h, bytes, len < sizeof(h) ? len : sizeof(h));
    int named = h.rank >= 0 && h.rank < NPROCS ? h.rank : 0;
    bool forged = ctl & FUZZ_DGRAM_FORGED;
    struct verbs_addr addr =
        client_data_addr(forged ? (named + 1 + (ctl >> 5) % (NPROCS - 1)) % NPROCS : named);
    struct ud_sender from = {.qpn = addr.qpn, .lid = addr.lid};
    bool served = !forged && len >= sizeof(h) && h.magic == DGRAM_MAGIC &&
                  h.kind == DGRAM_REQUESTS && h.count > 0 && h.rank >= 0 && h.rank < NPROCS;

    arena_snapshot();
    for (int i = 0; i < ARENA_NSEGS; i++) {
        size_t off = arena_segs[i].offset;
        memcpy(shadow + off, arena + off, arena_segs[i].size);
        memset(known + off, 1, arena_segs[i].size);
    }
    long state = memstat_now(MEM_DATAGRAM);
    long executed = hybrid_stats.executed;
    cur_from = &from;
    cur_rank = h.rank;
    nrefused = nsent = 0;
    send_mode = ctl & (FUZZ_DGRAM_BUSY | FUZZ_DGRAM_LOST);
    retry_due = drained = false;

    server_ud->on_bytes(server_ud->ctx, &from, bytes, len);

    arena_check();
    FUZZ_CHECK(!retry_due, "a send refused for want of a buffer was not tried again");
    if (verbose)
        printf("  %zu bytes, %d requests from rank %d%s: %d answer datagrams, %d refusals\n", len,
               len >= sizeof(h) ? h.count : 0, h.rank, forged ? " (forged)" : "", nsent, nrefused);
    if (!served) {
        FUZZ_CHECK(nrefused == 1, "a %s datagram refused %d times", forged ? "forged" : "malformed",
                   nrefused);
        FUZZ_CHECK(nsent == 0 && arena_unchanged() && memstat_now(MEM_DATAGRAM) == state &&
                       hybrid_stats.executed == executed,
                   "a %s datagram was answered, changed memory or made state",
                   forged ? "forged" : "malformed");
        return;
    }

    /* The requests, framed as the server must (dgram_protocol.h): a request cut short ends
     * the datagram. */
    collect_answers();
    if (verbose) {
        printf("    answers (seq:status[@rank, if to another]):");
        for (int i = 0; i < nanswers; i++) {
            printf(" %u:%d", answers[i].a.seq, answers[i].a.status);
            if (sent_to[answers[i].dgram] != h.rank)
                printf("@%d", sent_to[answers[i].dgram]);
        }
        printf("\n");
    }
    struct dgram_request rqs[UINT8_MAX];
    const uint8_t *payloads[UINT8_MAX];
    int nrqs = 0;
    bool cut = false;
    const uint8_t *p = bytes + sizeof(h);
    size_t left = len - sizeof(h);
    for (int i = 0; i < h.count; i++) {
        struct dgram_request *rq = &rqs[nrqs];
        if (left < sizeof(*rq)) {
            cut = true;
            break;
        }
        memcpy(rq, p, sizeof(*rq));
        size_t payload = dgram_op_carries(rq->op) ? rq->len : 0;
        if (payload > left - sizeof(*rq)) {
            cut = true;
            break;
        }
        payloads[nrqs++] = p + sizeof(*rq);
        size_t step = dgram_step(sizeof(*rq), payload);
        if (step >= left)
            break;
        p += step;
        left -= step;
    }
    /* Exactly the answers the model gives, in order, to numbers of this datagram's requests,
     * acking up to the model's next number, and nothing else. */
    struct model_client *mc = &model[h.rank];
    int nexec = 0;
    for (int i = 0; i < nrqs; i++)
        nexec += model_one(h.rank, &rqs[i], payloads[i]);
    int nown = next_answer;
    FUZZ_CHECK(nown == nanswers,
               "%d answers to the datagram's requests, then one to %u (status %d)", nown,
               answers[nown].a.seq, answers[nown].a.status);
    for (int i = 1; i < nown; i++)
        FUZZ_CHECK((int32_t)(answers[i].ack - answers[i - 1].ack) >= 0, "the ack went back");
    FUZZ_CHECK(nown == 0 || answers[nown - 1].ack == mc->expected,
               "the last ack is %u, the next number %u", answers[nown - 1].ack, mc->expected);
    /* Never applied twice: old (and early) numbers change nothing. */
    if (nexec == 0)
        FUZZ_CHECK(arena_unchanged(), "a datagram of no new number changed memory");
    for (int i = 0; i < ARENA_NSEGS; i++) {
        size_t off = arena_segs[i].offset;
        FUZZ_CHECK(matches((uintptr_t)arena + off, arena + off, arena_segs[i].size),
                   "segment %d changed where no request of the datagram was executed", i);
    }
    FUZZ_CHECK(nrefused == (int)cut, "%d refusals of a datagram %s", nrefused,
               cut ? "cut short" : "well framed");
    FUZZ_CHECK(hybrid_stats.executed - executed == nexec, "%ld requests executed, %d due",
               hybrid_stats.executed - executed, nexec);
}

/* The length a client would give the datagram at p (zeros past avail): its header and the
 * requests it counts, each with its data, cut to a datagram. */
static size_t natural_size(const uint8_t *p, size_t avail)
{
    struct dgram_header h = {0};
    memcpy(&h, p, avail < sizeof(h) ? avail : sizeof(h));
    size_t len = sizeof(h);
    for (int i = 0; i < h.count && len < datagram_bytes; i++) {
        struct dgram_request rq = {0};
        if (len < avail)
            memcpy(&rq, p + len, avail - len < sizeof(rq) ? avail - len : sizeof(rq));
        len += dgram_step(sizeof(rq), dgram_op_carries(rq.op) ? rq.len : 0);
    }
    return len < datagram_bytes ? len : datagram_bytes;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    arena_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!arena)
        LLVMFuzzerInitialize(NULL, NULL);
    struct fuzz_input in = {data, size};
    uint8_t world = fuzz_u8(&in);
    vdev.mtu = (enum ibv_mtu)(IBV_MTU_4096 - (world & 7) % 5);
    cfg.hybrid_window = WINDOW_MAX >> (world >> 3 & 3);
    arena_reset();
    model_reset();
    dgram_server_init();
    FUZZ_CHECK(server_ud, "no data endpoint");
    while (in.left >= 3) {
        uint8_t ctl = fuzz_u8(&in);
        size_t len = (ctl & FUZZ_DGRAM_NATURAL) ? natural_size(in.p, in.left) : fuzz_u16(&in);
        size_t avail = len < in.left ? len : in.left;
        if (!(ctl & FUZZ_DGRAM_NATURAL))
            len = avail;
        /* The device delivers no more than a datagram. */
        size_t bytes = len < datagram_bytes ? len : datagram_bytes;
        uint8_t *buf = calloc(1, bytes ? bytes : 1);
        FUZZ_CHECK(buf, "out of memory");
        memcpy(buf, in.p, avail < bytes ? avail : bytes);
        deliver(ctl, buf, bytes);
        if (ctl & FUZZ_DGRAM_TWICE)
            deliver(ctl, buf, bytes);
        free(buf);
        in.p += avail;
        in.left -= avail;
    }
    dgram_server_fini();
    engine_fini(); /* the clients' sequence spaces (the server's connections_fini frees them) */
    FUZZ_CHECK(memstat_now(MEM_DATAGRAM) == 0, "%ld bytes of client state left",
               memstat_now(MEM_DATAGRAM));
    return 0;
}
