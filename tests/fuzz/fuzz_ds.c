/*
 * Fuzz target `ds`: the data server's request decoder (dataserver/handlers.c
 * serve_message and what it calls: packed layouts, I/O vectors, accumulate,
 * Rmw, locks), with the real registry (registry.c), lock queue (locks.c),
 * stride walker and kernels. Around them, test doubles: four segments in
 * one arena at a fixed address (so that inputs can name them), everything
 * else in the arena a canary that ASan poisons (and that is compared after
 * every request in builds without ASan), with the runtime's doubles
 * (arena.c, shared with the dgram target); a reply recorder instead of
 * server_answer/server_answer_lock; an RDMA-write recorder instead of server_post_send.
 *
 * Input: a sequence of requests, each [u8 ctl][u16 len][len bytes]: bit 0 of
 * ctl picks one of two client connections, the bytes are what arrived in the
 * receive buffer (struct ds_message, then the payload). With bit 1 of ctl
 * set, [u16 len] is left out and the request is as long as a client would
 * make it for its header (header + len, or + k addresses and k * len for
 * I/O vectors), the payload zero-filled past the end of the input: a mutated
 * size then needs no matching change elsewhere.
 *
 * After every request: exactly one reply echoing the token (lock requests may
 * wait; an unlock may grant waiters), a refused request changed no byte of
 * any segment and wrote nothing back, only a get writes back (its exact
 * size, from inside the out buffer), and the canaries are intact. A SEND
 * whose first request says another follows (`more`) gets one reply per
 * request served, the first echoing its token; if every one was refused,
 * nothing changed.
 */
#include <string.h>

#include "arena.h"
#include "core/ticket_lock.h"
#include "core/wr_id.h"
#include "dataserver/handlers.h"
#include "dataserver/pulls.h"
#include "dataserver/locks.h"
#include "dataserver/answers.h"
#include "dataserver/sends.h"
#include "dataserver/engine.h"
#include "fuzz.h"

#define OUT_SIZE FUZZ_DS_OUT_SIZE

static uint8_t *out_region; /* the out buffer, with a canary tail */
static bool out_busy;

/* The arena's canaries, and the out buffer's tail (with ASan: poisoned, nothing to compare). */
static void check_canaries(void)
{
    arena_check();
#ifndef FUZZ_ASAN
    for (size_t i = 0; i < 64; i++)
        FUZZ_CHECK(out_region[OUT_SIZE + i] == CANARY, "canary after the out buffer hit");
#endif
}

/* ---- what the decoder needs from the rest of the server ---- */

/* Replies and RDMA writes of the request being served. */
struct reply {
    const struct server_conn *sc;
    uint64_t token;
    int status;
};
static struct reply replies[16];
static int nreplies;
static int nwrites;
static size_t write_len;

/* The decoder answers every request through one of these three: each counts as its reply. */
static void record_reply(struct server_conn *sc, uint64_t token, int status)
{
    FUZZ_CHECK(status == DS_OK || status == DS_EFAULT || status == DS_EINVAL || status == DS_EPERM,
               "reply status %d", status);
    if (nreplies < (int)(sizeof(replies) / sizeof(replies[0])))
        replies[nreplies] = (struct reply){sc, token, status};
    nreplies++;
}

void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait)
{
    (void)value;
    /* Only a success may wait for a later reply: a refusal is answered at once. */
    FUZZ_CHECK(!may_wait || status == DS_OK, "a refused request's answer may wait");
    record_reply(sc, token, status);
}

/* A request another one follows in its SEND: a refusal too is answered before the next. */
void server_answer_shared(struct server_conn *sc, uint64_t token, int status)
{
    record_reply(sc, token, status);
}

void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued)
{
    (void)queued;
    record_reply(sc, token, status);
}

/* A queued lock's first answer: its grant or refusal comes later (or never, in one input). */
void server_lock_queued(struct server_conn *sc, uint64_t token)
{
    record_reply(sc, token, DS_OK);
}

void server_reserve_sends(struct server_conn *sc, int n)
{
    FUZZ_CHECK(sc && n > 0 && n <= 2, "reserving %d sends", n);
}

size_t server_out_buf_size(void)
{
    return OUT_SIZE;
}

static struct pool_buffer the_out;

struct pool_buffer *server_out_buf_get(void)
{
    FUZZ_CHECK(!out_busy, "a second out buffer for one request");
    out_busy = true;
    the_out = (struct pool_buffer){.addr = out_region, .lkey = 0x77};
    return &the_out;
}

/* A write back gathered in place: every entry inside a registration, with its key. */
static void gathered_write(struct server_conn *sc, const struct ibv_send_wr *wr)
{
    FUZZ_CHECK(wr->num_sge >= 1 && wr->num_sge <= sc->max_sge, "%d gather entries", wr->num_sge);
    size_t total = 0;
    for (int i = 0; i < wr->num_sge; i++) {
        const struct ibv_sge *s = &wr->sg_list[i];
        const struct net_mr *m = arena_mr_holding(s->addr, s->length);
        FUZZ_CHECK(m && s->lkey == m->lkey, "a gather entry outside every segment");
        total += s->length;
    }
    nwrites++;
    write_len = total;
}

void server_out_buf_put(struct pool_buffer *o)
{
    FUZZ_CHECK(o == &the_out && out_busy, "an out buffer put back that was not taken");
    out_busy = false;
}

/* A pull (pulls.h) reads the client's data into the region (every entry inside a
 * registration), or a pulled request's payload into the out buffer (within it; the bytes the
 * client would have). It completes at once: serve_one serves it after serve_message. */
static struct {
    bool on;
    struct server_conn *sc;
    struct ds_message rq;
    struct pool_buffer *out;
    size_t payload;
} pending;

int pull_start(struct server_conn *sc, const struct ds_message *rq, const struct ibv_sge *into,
               int n, struct pool_buffer *out, size_t payload)
{
    FUZZ_CHECK(!pending.on, "a second pull on one connection");
    if (out) {
        FUZZ_CHECK(n == 1 && out == &the_out && out_busy && into->lkey == 0x77 &&
                       into->addr == (uintptr_t)out_region && into->length <= OUT_SIZE &&
                       into->length == payload,
                   "a pulled payload outside the out buffer");
        memset(out_region, (int)(rq->reply_addr & 0xff), into->length);
    } else {
        struct ibv_send_wr wr = {.sg_list = (struct ibv_sge *)into, .num_sge = n};
        gathered_write(sc, &wr);
    }
    pending.on = true;
    pending.sc = sc;
    pending.rq = *rq;
    pending.out = out;
    pending.payload = payload;
    return 0;
}

void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr)
{
    FUZZ_CHECK(wr->opcode == IBV_WR_RDMA_WRITE && !wr->next, "unexpected work request");
    if (wr_id_tag(wr->wr_id) == WR_TAG_POINTER && wr_id_pointer(wr->wr_id) == sc) {
        gathered_write(sc, wr);
        return;
    }
    FUZZ_CHECK(wr->num_sge == 1, "unexpected work request");
    const struct ibv_sge *s = wr->sg_list;
    FUZZ_CHECK(s->addr >= (uintptr_t)out_region && s->length <= OUT_SIZE &&
                   s->addr + s->length <= (uintptr_t)out_region + OUT_SIZE && s->lkey == 0x77,
               "RDMA write from outside the out buffer");
    FUZZ_CHECK(wr_id_pointer(wr->wr_id) == &the_out && the_out.owner == sc,
               "out buffer not tagged");
    nwrites++;
    write_len = s->length;
}

/* ---- the request engine: the harness says whether a request is new or a duplicate ---- */

static bool replaying; /* the input's control byte: serve the next request as a duplicate */

struct engine_client *engine_of(int client)
{
    (void)client;
    return NULL;
}

enum engine_verdict engine_check(const struct engine_client *e, uint64_t seq)
{
    (void)e;
    (void)seq;
    return replaying ? ENGINE_DUPLICATE : ENGINE_NEW;
}

void engine_served(struct engine_client *e, uint64_t seq)
{
    (void)e;
    (void)seq;
}

void engine_keep(struct engine_client *e, uint64_t seq, int status, int64_t value, bool by_datagram)
{
    (void)e;
    (void)by_datagram;
    (void)seq;
    (void)status;
    (void)value;
}

bool engine_kept(const struct engine_client *e, uint64_t seq, int *status, int64_t *value)
{
    (void)e;
    (void)seq;
    (void)status;
    (void)value;
    return false;
}

void engine_count_duplicate(void)
{
}

void engine_count_unserved(void)
{
}

/* ---- the harness ---- */

/* The second connection's QP gathers: strided gets are written back in place there. */
static struct server_conn conns[2] = {{.client = 5}, {.client = 6, .max_sge = 8}};
static bool verbose; /* FUZZ_VERBOSE=1: what each request got (to check a corpus) */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    arena_init();
    out_region = malloc(OUT_SIZE + 64);
    FUZZ_CHECK(out_region, "out of memory");
    memset(out_region + OUT_SIZE, CANARY, 64);
    FUZZ_POISON(out_region + OUT_SIZE, 64);
    return 0;
}

/* The replies to a SEND of several requests (only updates, which write nothing back). */
static void check_shared_send(const struct server_conn *sc, const struct ds_message *rq)
{
    int recorded = nreplies < 16 ? nreplies : 16;
    FUZZ_CHECK(nreplies >= 1 && replies[0].token == rq->token,
               "a shared SEND: %d replies, the first not to its first request", nreplies);
    bool any_ok = false;
    for (int i = 0; i < recorded; i++) {
        FUZZ_CHECK(replies[i].sc == sc, "a shared SEND answered on another connection");
        any_ok |= replies[i].status == DS_OK;
    }
    FUZZ_CHECK(nwrites == 0, "a shared SEND wrote back");
    if (!any_ok && nreplies <= recorded)
        FUZZ_CHECK(arena_unchanged(), "every request of a shared SEND refused, but memory changed");
}

/* Serves one request of `len` bytes (`avail` of them from the input, then zeros) and checks
 * what the server did. */
static void serve_one(struct server_conn *sc, const uint8_t *bytes, size_t avail, size_t len)
{
    /* Exactly the bytes received, so that a read past the message is out of bounds
     * (a request buffer is never shorter than a header: a short one is padded). */
    size_t alloc = len < sizeof(struct ds_message) ? sizeof(struct ds_message) : len;
    uint8_t *buf = calloc(1, alloc);
    FUZZ_CHECK(buf, "out of memory");
    memcpy(buf, bytes, avail < len ? avail : len);
    struct ds_message rq;
    memcpy(&rq, buf, sizeof(rq));
    arena_snapshot();
    nreplies = nwrites = 0;
    write_len = 0;
    serve_message(sc, (struct ds_message *)buf, len);
    if (pending.on) {
        pending.on = false;
        serve_pulled(pending.sc, &pending.rq, pending.out, pending.payload, IBV_WC_SUCCESS);
        FUZZ_CHECK(!out_busy, "a pulled payload's out buffer kept");
    }
    out_busy = false;
    free(buf);
    check_canaries();

    if (verbose) {
        printf("  op %d, %zu bytes: %d replies (status", rq.op, len, nreplies);
        for (int i = 0; i < nreplies && i < 16; i++)
            printf(" %d", replies[i].status);
        printf("), %d writes\n", nwrites);
    }
    if (len < sizeof(rq)) {
        FUZZ_CHECK(nreplies == 0 && nwrites == 0 && arena_unchanged(),
                   "a short request was served");
        return;
    }
    /* A replay applies nothing, whatever it asks (a get may be read again). */
    if (replaying)
        FUZZ_CHECK(arena_unchanged(), "a replayed op %d changed memory", rq.op);
    const struct reply *own = nreplies > 0 ? &replies[0] : NULL;
    if (rq.flags & DS_MORE) {
        check_shared_send(sc, &rq);
        return;
    }
    if (rq.op == DS_LOCK) {
        /* Granted, refused or told it is queued (which returns its credit): at once. */
        FUZZ_CHECK(nreplies == 1, "%d replies to a lock request", nreplies);
    } else {
        FUZZ_CHECK(nreplies >= 1 && (rq.op == DS_UNLOCK || nreplies == 1),
                   "op %d: %d replies instead of one", rq.op, nreplies);
    }
    if (own) {
        FUZZ_CHECK(own->token == rq.token && own->sc == sc, "the reply is not to this request");
        if (own->status != DS_OK)
            FUZZ_CHECK(arena_unchanged() && nwrites == 0, "op %d refused (%d) but acted", rq.op,
                       own->status);
    }
    /* Gets write back, pulls read the client's data (recorded the same way): once, exactly. */
    bool moves = rq.op == DS_GET_PACKED || rq.op == DS_GET_IOV ||
                 (rq.op == DS_PUT_PULL && !replaying); /* a replayed pull is answered only */
    if (!moves || !own || own->status != DS_OK) {
        FUZZ_CHECK(nwrites == 0, "op %d wrote back", rq.op);
        return;
    }
    FUZZ_CHECK(nwrites == 1 && arena_unchanged(), "a get wrote %d times or changed memory",
               nwrites);
    uint64_t expect = rq.op == DS_GET_IOV ? (uint64_t)rq.value * rq.len : rq.len;
    FUZZ_CHECK(write_len == expect, "a get wrote %zu bytes back, asked %llu", write_len,
               (unsigned long long)expect);
}

/* The size of the request a well-behaved client would send with this header (bounded). */
static size_t natural_size(const uint8_t *p, size_t avail)
{
    struct ds_message h = {0};
    memcpy(&h, p, avail < sizeof(h) ? avail : sizeof(h));
    uint64_t payload = 0, k = h.value > 0 ? (uint64_t)h.value : 0;
    if (h.op == DS_ACC || h.op == DS_PUT_PACKED || h.op == DS_ACC_PACKED)
        payload = h.len;
    else if (h.op == DS_GET_IOV)
        payload = k * 8;
    else if ((h.op == DS_PUT_IOV || h.op == DS_ACC_IOV) && k <= 4096 && h.len <= 65536)
        payload = k * 8 + k * h.len;
    return sizeof(h) + (payload <= 65536 ? payload : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!arena)
        LLVMFuzzerInitialize(NULL, NULL);
    arena_reset();
    struct fuzz_input in = {data, size};
    while (in.left >= 3) {
        uint8_t ctl = fuzz_u8(&in);
        size_t len = (ctl & 2) ? natural_size(in.p, in.left) : fuzz_u16(&in);
        size_t avail = len < in.left ? len : in.left;
        if (!(ctl & 2))
            len = avail;
        replaying = (ctl & 4) != 0;
        serve_one(&conns[ctl & 1], in.p, avail, len);
        in.p += avail;
        in.left -= avail;
    }
    /* Waiters of this input are forgotten (answered with an error), as when a block is freed. */
    nreplies = 0;
    locks_forget_range((uintptr_t)arena + FUZZ_DS_LOCK_OFFSET,
                       FUZZ_DS_LOCKS * sizeof(struct ticket_lock));
    check_canaries();
    return 0;
}
