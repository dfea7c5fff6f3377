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
 * Both carriers feed one request engine (engine.c): with FUZZ_DGRAM_RC the
 * datagram's requests come over RC instead, one SEND each through
 * handlers.c's serve_message on the named rank's connection (a contiguous
 * put or get as a strided one of no levels, a put left in place for a pull
 * with bit 0 of its pad), in the same sequence space as its datagrams;
 * FUZZ_DGRAM_BROKEN breaks that connection for them (answers are still
 * given to it, a pull is cut short after half its data), FUZZ_DGRAM_TWICE
 * replays them on a working one. The model: the next number is executed,
 * on a broken connection too, but a pull cut short, which stays unexecuted
 * with its number unused; an older number is answered again and never
 * applied (a get read again; the kept answer, which RC keeps for an Rmw or
 * a refusal and UD for every request, in a ring of 256 numbers; else a lost
 * Rmw is refused and an update succeeded); a newer one is refused on a
 * working connection and ignored on a broken one. A number repeated over
 * the other carrier than the one that executed it is answered only if its
 * answer was kept, and changes nothing (a client changes carrier only once
 * its requests are answered, so only safety is checked there).
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
#include <errno.h>
#include <limits.h>
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
#include "core/wr_id.h"
#include "dataserver/answers.h"
#include "dataserver/handlers.h"
#include "dataserver/pulls.h"
#include "dataserver/server_conn.h"
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

bool directory_client_data(int rank, struct verbs_addr *out)
{
    FUZZ_CHECK(rank >= 0 && rank < NPROCS, "the directory asked for rank %d", rank);
    *out = client_data_addr(rank);
    return true;
}

void directory_park(int rank, const struct ud_sender *from, const void *bytes, size_t len,
                    dir_replay_fn replay)
{
    (void)rank, (void)from, (void)bytes, (void)len, (void)replay;
    FUZZ_CHECK(0, "a datagram parked although every entry is known");
}

void directory_offer_server_data(uint32_t qpn)
{
    FUZZ_CHECK(qpn == server_qp.qp_num, "offered QP %u, not the endpoint's", qpn);
}

void ud_create_data(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
                    const char *who, size_t datagram, int nsend, int nrecv, int max_recv,
                    ud_bytes_fn fn, void *ctx)
{
    FUZZ_CHECK(!server_ud, "a second data endpoint");
    FUZZ_CHECK(send_ep == &ds_res.sends && recv_ep == &ds_res.requests && nsend > 0 && nrecv > 0 &&
                   max_recv >= nrecv,
               "the endpoint is not on the server's CQs");
    FUZZ_CHECK(datagram == dgram_size(cfg.hybrid_size, (int)vdev.mtu),
               "datagrams of %zu bytes, not the configured size cut to the MTU", datagram);
    *u = (struct ud_endpoint){.who = who, .qp = &server_qp, .on_bytes = fn, .ctx = ctx};
    server_ud = u;
    datagram_bytes = datagram;
}

/* The model's receive queue never runs out. */
void ud_grow_recv(struct ud_endpoint *u, int want)
{
    FUZZ_CHECK(u == server_ud && want > 0, "growing another endpoint");
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

/* ---- the RC carrier: one connection per rank, what the server did on it recorded ---- */

static struct server_conn conns[NPROCS];
static struct server_conn *cur_sc; /* the connection whose SEND is being served */
static struct {
    int n;
    uint64_t token;
    int status;
    int64_t value;
} rc_answer;
static uint8_t rc_written[FUZZ_DGRAM_SIZE]; /* a get's RDMA write back, gathered */
static size_t rc_written_len;
static int rc_writes;
static const uint8_t *pull_data; /* the client's memory a pull reads */
static bool pull_breaks;         /* the connection fails during the pull */
static size_t pull_landed;       /* what it wrote before it failed */

void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait)
{
    FUZZ_CHECK(sc == cur_sc, "an answer on another connection");
    FUZZ_CHECK(!may_wait || status == DS_OK, "a refused request's answer may wait");
    rc_answer.n++;
    rc_answer.token = token;
    rc_answer.status = status;
    rc_answer.value = value;
}

/* One request per SEND here: nothing shares one. */
void server_answer_shared(struct server_conn *sc, uint64_t token, int status)
{
    FUZZ_CHECK(0, "a shared answer to a SEND of one request");
}

/* No lock request comes (locks have a target of their own, fuzz_ds). */
void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued)
{
    FUZZ_CHECK(0, "a lock answer");
}

void server_lock_queued(struct server_conn *sc, uint64_t token)
{
    FUZZ_CHECK(0, "a queued lock");
}

void server_reserve_sends(struct server_conn *sc, int n)
{
    FUZZ_CHECK(sc == cur_sc && n > 0 && n <= 2, "reserving %d sends", n);
}

size_t server_out_buf_size(void)
{
    return FUZZ_DS_OUT_SIZE;
}

/* Contiguous gets gather in place: the out buffer is never needed. */
struct pool_buffer *server_out_buf_get(void)
{
    FUZZ_CHECK(0, "an out buffer for a contiguous get");
    return NULL;
}

void server_out_buf_put(struct pool_buffer *o)
{
    (void)o;
    FUZZ_CHECK(0, "an out buffer put back: datagrams pull nothing");
}

/* Every entry of a gather list inside a registration, with its key; their bytes in a row. */
static size_t gather(const struct ibv_sge *sge, int n, uint8_t *into)
{
    FUZZ_CHECK(n >= 1 && n <= cur_sc->max_sge, "%d gather entries", n);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        const struct net_mr *m = arena_mr_holding(sge[i].addr, sge[i].length);
        FUZZ_CHECK(m && sge[i].lkey == m->lkey, "a gather entry outside every segment");
        FUZZ_CHECK(total + sge[i].length <= FUZZ_DGRAM_SIZE, "more gathered than a request has");
        if (into)
            memcpy(into + total, (const void *)(uintptr_t)sge[i].addr, sge[i].length);
        total += sge[i].length;
    }
    return total;
}

/* The RDMA read of a put the client left in place (pulls.h): its data lands, or part of it
 * and the connection fails (the request stays unexecuted for the replay). It completes at
 * once: the harness serves it after serve_message. */
static struct {
    bool on;
    struct ds_message rq;
    int status;
} pending;

int pull_start(struct server_conn *sc, const struct ds_message *rq, const struct ibv_sge *into,
               int n, struct pool_buffer *out, size_t payload)
{
    (void)payload;
    FUZZ_CHECK(sc == cur_sc && !out && rq->reply_addr == (uintptr_t)pull_data &&
                   rq->reply_rkey == 0x99 && !pending.on,
               "a pull from elsewhere than the client's data");
    size_t total = gather(into, n, NULL), done = 0;
    size_t upto = pull_breaks ? total / 2 : total;
    for (int i = 0; i < n && done < upto; i++) {
        size_t k = into[i].length < upto - done ? into[i].length : upto - done;
        memcpy((void *)(uintptr_t)into[i].addr, pull_data + done, k);
        done += k;
    }
    pull_landed = done;
    pending.on = true;
    pending.rq = *rq;
    pending.status = pull_breaks ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS;
    return 0;
}

void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr)
{
    FUZZ_CHECK(sc == cur_sc && wr->opcode == IBV_WR_RDMA_WRITE && !wr->next &&
                   wr_id_tag(wr->wr_id) == WR_TAG_POINTER && wr_id_pointer(wr->wr_id) == sc,
               "unexpected work request");
    rc_writes++;
    rc_written_len = gather(wr->sg_list, wr->num_sge, rc_written);
}

/* ---- the model ---- */

/* What the server did with one number of a client, and over which carrier. */
struct model_answer {
    int32_t status;
    int64_t value;
    uint8_t op; /* enum dgram_op, whichever carrier */
    bool rc;
    bool kept; /* its answer was kept for a duplicate */
};

#define MODEL_SEQS 2048 /* numbers per client the model follows; an input stops before */
#define KEPT_RING  DS_MAX_UNANSWERED /* how far back RC replays are answered (windows are smaller) \
                                      */

/* Per client: the number executed next, the number its datagrams acked up to, and what each
 * executed number got. */
static struct model_client {
    uint32_t expected;
    uint32_t acked;
    struct model_answer done[MODEL_SEQS];
} model[NPROCS];

static void model_keep(struct model_client *mc, uint32_t seq)
{
    mc->done[seq].kept = true;
}

/* Whether the engine still answers `seq` from what it kept (engine.h): over RC within the
 * last KEPT_RING numbers, a datagram's within the window and not acked. */
static bool model_kept(const struct model_client *mc, uint32_t seq)
{
    const struct model_answer *c = &mc->done[seq];
    uint32_t behind = mc->expected - seq;
    if (!c->kept)
        return false;
    if (c->rc)
        return behind <= KEPT_RING;
    return seq >= mc->acked && behind <= (uint32_t)cfg.hybrid_window;
}

/* A verified datagram's ack (engine_acked): widened next to the next number, never past it. */
static void model_acked(struct model_client *mc, uint32_t ack)
{
    int32_t ahead = (int32_t)(ack - mc->expected);
    if (ahead < 0 && (uint32_t)(-(int64_t)ahead) > mc->expected)
        return;
    uint32_t full = ahead > 0 ? mc->expected : mc->expected + (uint32_t)ahead;
    if (full > mc->acked)
        mc->acked = full;
}

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

/* The effect on the model's segments of request rq (new, status DS_OK), and the old value an
 * Rmw must have answered. */
static void model_apply(const struct dgram_request *rq, const uint8_t *payload, int64_t answered)
{
    size_t off = rq->addr - (uintptr_t)arena;
    if (rq->op == DGRAM_RMW) {
        size_t size = rmw_operand_size(rq->rmw_op);
        int64_t old = 0;
        if (size == sizeof(int32_t)) {
            int32_t v;
            memcpy(&v, shadow + off, sizeof(v));
            old = v;
        } else {
            memcpy(&old, shadow + off, sizeof(old));
        }
        FUZZ_CHECK(!all_known(rq->addr, size) || answered == old,
                   "an Rmw answered %lld, the old value was %lld", (long long)answered,
                   (long long)old);
        forget(rq->addr, size);
    } else if (rq->op == DGRAM_PUT) {
        memcpy(shadow + off, payload, rq->len);
        memset(known + off, 1, rq->len);
    } else if (rq->op == DGRAM_ACC) {
        forget(rq->addr, rq->len);
    }
}

/* The model of serve_one and execute for one request of a verified client. */
static int model_one(int rank, const struct dgram_request *rq, const uint8_t *payload)
{
    struct model_client *mc = &model[rank];
    uint32_t window = (uint32_t)cfg.hybrid_window;
    uint32_t behind = mc->expected - rq->seq;
    const uint8_t *data;
    if ((int32_t)(rq->seq - mc->expected) > 0)
        return 0; /* early: dropped */
    if (behind > 0) {
        /* Before the window, or executed over RC with no answer kept: no answer. */
        if (behind > window || behind > mc->expected || !model_kept(mc, rq->seq))
            return 0;
        const struct model_answer *c = &mc->done[rq->seq];
        const struct dgram_answer *a = answer_to(rq, &data);
        if (c->rc)
            return 0; /* answered from what RC kept (a client changes carrier only once its
                       * requests are answered: it never sends a number again over the other) */
        FUZZ_CHECK(a->value == c->value, "a repeated answer to %u changed its value", rq->seq);
        if (rq->op == DGRAM_GET) {
            /* Read again where the retransmission says, whatever the first one was (a get's
             * data is never kept); any other op is answered as the first one was. */
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
    FUZZ_CHECK(rq->op == DGRAM_RMW || a->value == 0, "op %d answered a value", rq->op);
    if (rq->op == DGRAM_GET)
        check_get_data(rq, a, data);
    else
        FUZZ_CHECK(a->len == 0, "op %d answered with data", rq->op);
    if (status == DS_OK)
        model_apply(rq, payload, a->value);
    mc->done[rq->seq] = (struct model_answer){.status = status, .value = a->value, .op = rq->op};
    model_keep(mc, rq->seq); /* every datagram request's answer is kept */
    mc->expected++;
    return 1;
}

/* ---- the RC carrier's model ---- */

/* The request a client sends over RC for rq: a contiguous put (packed, or left in place for
 * a pull: bit 0 of rq->pad) or get is a strided one of no levels. */
static bool rc_pull(const struct dgram_request *rq)
{
    return rq->op == DGRAM_PUT && (rq->pad & 1);
}

static enum ds_op rc_op(const struct dgram_request *rq)
{
    switch (rq->op) {
    case DGRAM_PUT:
        return rc_pull(rq) ? DS_PUT_PULL : DS_PUT_PACKED;
    case DGRAM_GET:
        return DS_GET_PACKED;
    case DGRAM_ACC:
        return DS_ACC;
    case DGRAM_RMW:
        return DS_RMW;
    default:
        return 0; /* no op */
    }
}

/* The status serve_request must give a new RC request, by the rules of handlers.c. */
static int32_t rc_expected_status(const struct dgram_request *rq)
{
    if (rq->op == DGRAM_PUT || rq->op == DGRAM_GET) {
        if (rq->len == 0 || rq->len > INT_MAX)
            return DS_EINVAL; /* a count of 0 or one that does not fit */
        return in_segment(rq->addr, rq->len) ? DS_OK : DS_EFAULT;
    }
    if (rq->op == DGRAM_ACC || rq->op == DGRAM_RMW)
        return expected_status(rq); /* serve_acc, serve_rmw: the same functions */
    return DS_EINVAL;
}

/* A get's data, written back by RDMA before the answer: the bytes the model holds. */
static void check_rc_get(const struct dgram_request *rq, int status)
{
    FUZZ_CHECK(rc_writes == (status == DS_OK), "%d RDMA writes for a get answered %d", rc_writes,
               status);
    if (status != DS_OK)
        return;
    FUZZ_CHECK(rc_written_len == rq->len, "a get of %u bytes wrote %zu", rq->len, rc_written_len);
    FUZZ_CHECK(matches(rq->addr, rc_written, rq->len), "a get of seq %u wrote other bytes",
               rq->seq);
}

/*
 * The model of serve_message for one request over RC (handlers.c, engine.h):
 * the next number is executed, on a broken connection too (only its answer
 * cannot leave), but for a pull the failing connection cut short: it stays
 * unexecuted, its number unused. An older number is answered again and
 * applied never: a get read again, otherwise the kept answer, else an Rmw's
 * is lost (refused) and an update succeeded. A newer number is refused on a
 * working connection, ignored on a broken one.
 */
static int model_rc_one(int rank, const struct dgram_request *rq, const uint8_t *payload,
                        bool broken)
{
    struct model_client *mc = &model[rank];
    uint32_t seq = rq->seq;
    bool get = rq->op == DGRAM_GET;
    if (seq > mc->expected) { /* a full 64-bit number over RC: no wrapping */
        FUZZ_CHECK(rc_answer.n == (broken ? 0 : 1) && rc_writes == 0,
                   "an early request (%u, next %u) on a %s connection: %d answers", seq,
                   mc->expected, broken ? "broken" : "working", rc_answer.n);
        FUZZ_CHECK(broken || rc_answer.status == DS_EINVAL, "an early request answered %d",
                   rc_answer.status);
        return 0;
    }
    if (seq != mc->expected) {
        FUZZ_CHECK(rc_answer.n == 1, "a replayed request (%u) got %d answers", seq, rc_answer.n);
        if (get) {
            int32_t status = rc_expected_status(rq);
            FUZZ_CHECK(rc_answer.status == status, "a get replayed: status %d, not %d",
                       rc_answer.status, status);
            check_rc_get(rq, status);
            return 0;
        }
        FUZZ_CHECK(rc_writes == 0, "a replayed update wrote back");
        const struct model_answer *c = &mc->done[seq];
        int32_t status = DS_OK;
        int64_t value = 0;
        if (model_kept(mc, seq)) {
            status = c->status;
            value = c->value;
        } else if (rq->op == DGRAM_RMW) {
            status = DS_EINVAL;
        }
        FUZZ_CHECK(rc_answer.status == status && rc_answer.value == value,
                   "request %u replayed: answered %d (%lld), not %d (%lld)", seq, rc_answer.status,
                   (long long)rc_answer.value, status, (long long)value);
        return 0;
    }
    int32_t status = rc_expected_status(rq);
    if (rc_pull(rq) && status == DS_OK && broken) {
        FUZZ_CHECK(rc_answer.n == 0, "a pull the connection cut short was answered (%d)",
                   rc_answer.status);
        /* Part of the data landed: the same bytes the replay brings. */
        size_t off = rq->addr - (uintptr_t)arena;
        memcpy(shadow + off, payload, pull_landed);
        memset(known + off, 1, pull_landed);
        return 0;
    }
    FUZZ_CHECK(rc_answer.n == 1 && rc_answer.status == status,
               "op %d, seq %u over RC: %d answers, status %d, not %d", rq->op, seq, rc_answer.n,
               rc_answer.status, status);
    FUZZ_CHECK(rq->op == DGRAM_RMW || rc_answer.value == 0, "op %d answered a value", rq->op);
    if (get)
        check_rc_get(rq, status);
    else
        FUZZ_CHECK(rc_writes == 0, "op %d wrote back", rq->op);
    if (status == DS_OK)
        model_apply(rq, payload, rc_answer.value);
    mc->done[seq] =
        (struct model_answer){.status = status, .value = rc_answer.value, .op = rq->op, .rc = true};
    if (rq->op == DGRAM_RMW || status != DS_OK)
        model_keep(mc, seq);
    mc->expected++;
    return 1;
}

/* ---- the harness ---- */

static void model_reset(void)
{
    memset(model, 0, sizeof(model));
}

/* Whether a client's numbers may soon pass what the model follows (an input stops there). */
static bool model_full(void)
{
    for (int r = 0; r < NPROCS; r++)
        if (model[r].expected >= MODEL_SEQS - UINT8_MAX)
            return true;
    return false;
}

/* The requests of a datagram of count at bytes, framed as the server must (dgram_protocol.h):
 * a request cut short ends it (*cut). */
static int frame(const uint8_t *bytes, size_t len, int count, struct dgram_request *rqs,
                 const uint8_t **payloads, bool *cut)
{
    int nrqs = 0;
    const uint8_t *p = bytes + sizeof(struct dgram_header);
    size_t left = len - sizeof(struct dgram_header);
    *cut = false;
    for (int i = 0; i < count; i++) {
        struct dgram_request *rq = &rqs[nrqs];
        if (left < sizeof(*rq)) {
            *cut = true;
            break;
        }
        memcpy(rq, p, sizeof(*rq));
        size_t payload = dgram_op_carries(rq->op) ? rq->len : 0;
        if (payload > left - sizeof(*rq)) {
            *cut = true;
            break;
        }
        payloads[nrqs++] = p + sizeof(*rq);
        size_t step = dgram_step(sizeof(*rq), payload);
        if (step >= left)
            break;
        p += step;
        left -= step;
    }
    return nrqs;
}

/* The segments as the model says at the start of a delivery: all known. */
static void model_sync(void)
{
    arena_snapshot();
    for (int i = 0; i < ARENA_NSEGS; i++) {
        size_t off = arena_segs[i].offset;
        memcpy(shadow + off, arena + off, arena_segs[i].size);
        memset(known + off, 1, arena_segs[i].size);
    }
}

/* Every segment is what the model holds where it knows. */
static void check_segments(const char *after)
{
    for (int i = 0; i < ARENA_NSEGS; i++) {
        size_t off = arena_segs[i].offset;
        FUZZ_CHECK(matches((uintptr_t)arena + off, arena + off, arena_segs[i].size),
                   "segment %d changed where no request %s was executed", i, after);
    }
}

/*
 * The requests of the datagram at bytes sent over RC instead, by the rank
 * its header names (another: rank 0), one SEND each, on that rank's
 * connection, broken if ctl says so; delivered again on a working
 * connection if it says twice (the client's replay).
 */
static void deliver_rc(uint8_t ctl, const uint8_t *bytes, size_t len)
{
    struct dgram_header h = {0};
    memcpy(&h, bytes, len < sizeof(h) ? len : sizeof(h));
    if (len < sizeof(h))
        return;
    int rank = h.rank >= 0 && h.rank < NPROCS ? h.rank : 0;
    struct dgram_request rqs[UINT8_MAX];
    const uint8_t *payloads[UINT8_MAX];
    bool cut;
    int nrqs = frame(bytes, len, h.count, rqs, payloads, &cut);
    for (int round = 0; round < ((ctl & FUZZ_DGRAM_TWICE) ? 2 : 1); round++) {
        bool broken = round == 0 && (ctl & FUZZ_DGRAM_BROKEN);
        for (int i = 0; i < nrqs; i++) {
            const struct dgram_request *rq = &rqs[i];
            size_t payload = rq->op == DGRAM_PUT && !rc_pull(rq) ? rq->len
                             : rq->op == DGRAM_ACC               ? rq->len
                                                                 : 0;
            struct ds_message *m = malloc(sizeof(*m) + (payload ? payload : 1));
            FUZZ_CHECK(m, "out of memory");
            *m = (struct ds_message){.op = (uint8_t)rc_op(rq),
                                     .datatype = rq->datatype,
                                     .rmw_op = rq->rmw_op,
                                     .origin = rank,
                                     .token = 0x7000 + rq->seq,
                                     .seq = rq->seq,
                                     .addr = rq->addr,
                                     .len = rq->len,
                                     .value = rq->value,
                                     .target_local = rq->target_local};
            memcpy(m->scale, rq->scale, sizeof(m->scale));
            if (rq->op == DGRAM_PUT || rq->op == DGRAM_GET) {
                m->stride.count[0] = (int32_t)rq->len;
                m->reply_addr = rc_pull(rq) ? (uintptr_t)payloads[i] : 0x5000;
                m->reply_rkey = rc_pull(rq) ? 0x99 : 0x55;
            }
            memcpy(m + 1, payloads[i], payload);
            model_sync();
            cur_sc = &conns[rank];
            cur_sc->broken = broken;
            rc_answer.n = rc_writes = 0;
            pull_data = payloads[i];
            pull_breaks = broken;
            pull_landed = 0;
            serve_message(cur_sc, m, sizeof(*m) + payload);
            if (pending.on) {
                pending.on = false;
                serve_pulled(cur_sc, &pending.rq, NULL, 0, pending.status);
            }
            arena_check();
            if (verbose)
                printf("  RC%s from rank %d: op %d seq %u: %d answers (status %d)\n",
                       broken ? " (broken)" : "", rank, rq->op, rq->seq, rc_answer.n,
                       rc_answer.status);
            FUZZ_CHECK(rc_answer.n == 0 || rc_answer.token == m->token, "an answer to token %llu",
                       (unsigned long long)rc_answer.token);
            int nexec = model_rc_one(rank, rq, payloads[i], broken);
            if (nexec == 0 && !pull_landed)
                FUZZ_CHECK(arena_unchanged(), "an RC request of no new number changed memory");
            check_segments("over RC");
            free(m);
            cur_sc->broken = false;
        }
    }
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

    model_sync();
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
    bool cut;
    int nrqs = frame(bytes, len, h.count, rqs, payloads, &cut);
    /* Exactly the answers the model gives, in order, to numbers of this datagram's requests,
     * acking up to the model's next number, and nothing else. */
    struct model_client *mc = &model[h.rank];
    model_acked(mc, h.ack);
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
    check_segments("of the datagram");
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
    for (int r = 0; r < NPROCS; r++)
        conns[r] = (struct server_conn){.client = r, .engine = engine_of(r), .max_sge = 4};
    FUZZ_CHECK(server_ud, "no data endpoint");
    while (in.left >= 3 && !model_full()) {
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
        if ((ctl & FUZZ_DGRAM_RC) && !(ctl & FUZZ_DGRAM_FORGED)) {
            deliver_rc(ctl, buf, bytes);
        } else {
            deliver(ctl, buf, bytes);
            if (ctl & FUZZ_DGRAM_TWICE)
                deliver(ctl, buf, bytes);
        }
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
