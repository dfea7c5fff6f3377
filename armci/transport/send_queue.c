/*
 * The send queue of a client connection (send_queue.h): room, selective
 * signaling and what a signal retires, the chain of requests not posted
 * yet and its posting, and the lazy flushes. Requests to the data server
 * are built in requests.c, send completions handled in retire.c.
 */
#include "transport/send_queue.h"

#include <stdlib.h>
#include <string.h>

#include "common/fifo.h"
#include "common/grow.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/util.h"
#include "core/wr_id.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/replay_log.h"
#include "transport/work.h"
#include "verbs/rc_qp.h"

/* Connections with lazy works that no signaled request covers yet. */
static struct conn **dirty;
static int ndirty, capdirty;

/* Signaled requests in flight over all connections (at most SQ_SEND_BUDGET). */
static int signaled;
static void (*wait_progress)(void);

void sq_init(void (*wait)(void))
{
    wait_progress = wait;
    signaled = 0;
}

static int signal_every(const struct conn *c)
{
    return c->sq_depth >= 8 ? c->sq_depth / 4 : 1;
}

bool sq_room(const struct conn *c)
{
    return c->io->sq_posted < c->sq_depth && signaled < SQ_SEND_BUDGET;
}

/*
 * The requests of c prepared and not yet posted: RDMA writes and reads that
 * nobody waits for yet go here and are posted together, with one
 * ibv_post_send (one doorbell), when someone waits or makes progress, when
 * another request is posted on c, or when the chain is long enough. A small
 * write's payload is copied into the chain when it is added, so the
 * caller's buffer is free at once, as with an inline write posted at once.
 */
struct sq_chain {
    int n;
    int cap; /* grows with what a connection chains at once, up to chain_cap */
    struct ibv_send_wr *wr;
    struct ibv_sge *sge;
    uint64_t (*data)[SQ_CHAIN_INLINE / sizeof(uint64_t)];
};

/* Requests a connection's first chain has room for: it doubles when a chain fills it. */
#define CHAIN_INITIAL 4

static size_t chain_bytes(int cap)
{
    return sizeof(struct sq_chain) +
           (size_t)cap * (sizeof(struct ibv_send_wr) + sizeof(struct ibv_sge) + SQ_CHAIN_INLINE);
}

/* A chain with room for cap requests, in one allocation, holding old's requests (their links
 * and inline copies pointed anew), or none. */
static struct sq_chain *chain_new(int cap, const struct sq_chain *old)
{
    struct sq_chain *ch = xmalloc(chain_bytes(cap));
    ch->cap = cap;
    ch->wr = (struct ibv_send_wr *)(ch + 1);
    ch->sge = (struct ibv_sge *)(ch->wr + cap);
    ch->data = (uint64_t(*)[SQ_CHAIN_INLINE / sizeof(uint64_t)])(ch->sge + cap);
    ch->n = old ? old->n : 0;
    for (int i = 0; i < ch->n; i++) {
        ch->wr[i] = old->wr[i];
        ch->sge[i] = old->sge[i];
        memcpy(ch->data[i], old->data[i], SQ_CHAIN_INLINE);
        ch->wr[i].sg_list = &ch->sge[i];
        if (old->sge[i].addr == (uintptr_t)old->data[i])
            ch->sge[i].addr = (uintptr_t)ch->data[i];
        ch->wr[i].next = i + 1 < ch->n ? &ch->wr[i + 1] : NULL;
    }
    memstat_add(MEM_SEND_QUEUES, (long)(chain_bytes(cap) - (old ? chain_bytes(old->cap) : 0)));
    return ch;
}

/* How many requests a chain holds before it is posted: half the send queue, so that on an
 * adapter one chain moves while the next fills. */
static int chain_cap(const struct conn *c)
{
    int half = c->sq_depth / 2 > 0 ? c->sq_depth / 2 : 1;
    return half < SQ_CHAIN_MAX ? half : SQ_CHAIN_MAX;
}

void sq_mark_dirty(struct conn *c)
{
    if (c->io->sq_dirty)
        return;
    GROW_FOR_ONE(dirty, ndirty, capdirty, 8, xrealloc);
    dirty[ndirty++] = c;
    c->io->sq_dirty = true;
}

/* Accounts a signaled request: it retires the run before it and the lazy works in it. */
static int ring_push(struct conn *c)
{
    if (!c->io->sq_ring) {
        c->io->sq_ring = xcalloc((size_t)c->sq_depth, sizeof(*c->io->sq_ring));
        memstat_add(MEM_SEND_QUEUES, (long)(sizeof(*c->io->sq_ring) * (size_t)c->sq_depth));
    }
    return (c->io->sq_ring_head + c->io->sq_ring_count++) % c->sq_depth;
}

static void push_signal(struct conn *c, struct ibv_send_wr *wr, uint64_t wr_id)
{
    int tail = ring_push(c);
    c->io->sq_ring[tail] = (struct sq_retire){.wrs = (uint32_t)c->io->sq_unsignaled + 1,
                                              .lazy = (uint32_t)c->io->sq_lazy_pending};
    c->io->sq_unsignaled = 0;
    c->io->sq_lazy_pending = 0;
    c->io->sq_posted++;
    signaled++;
    wr->send_flags |= IBV_SEND_SIGNALED;
    wr->wr_id = wr_id;
}

/*
 * The last request of a chain about to be posted, prepared unsignaled,
 * becomes the signal of the run it ends: its completion then retires the
 * lazy works before it without a flush of their own. Needs room in the
 * process's budget of signaled requests; without it the works stay lazy
 * and a flush covers them later.
 */
static void promote_tail(struct conn *c, struct ibv_send_wr *wr)
{
    if ((wr->send_flags & IBV_SEND_SIGNALED) || !c->io->sq_lazy_pending ||
        signaled >= SQ_SEND_BUDGET)
        return;
#if ARMCI_MUTANT_IS(chain_tail_miscounted)
    c->io->sq_unsignaled++; /* counts the tail twice: the ring retires one request too many */
#endif
    int tail = ring_push(c);
    /* The tail was counted unsignaled in sq_prepare: the run it ends includes it already. */
    c->io->sq_ring[tail] = (struct sq_retire){.wrs = (uint32_t)c->io->sq_unsignaled,
                                              .lazy = (uint32_t)c->io->sq_lazy_pending};
    c->io->sq_unsignaled = 0;
    c->io->sq_lazy_pending = 0;
    signaled++;
    wr->send_flags |= IBV_SEND_SIGNALED;
    wr->wr_id = wr_id_make((uintptr_t)c, WR_TAG_CONN);
}

void sq_prepare(struct conn *c, struct ibv_send_wr *wr, struct work *w, bool last, bool wanted)
{
    if ((last && wanted) || c->io->sq_unsignaled + 1 >= signal_every(c)) {
        /* A signal that is not the work's last request vouches for the run, not for w. */
        push_signal(c, wr, last ? (uintptr_t)w : wr_id_make((uintptr_t)c, WR_TAG_CONN));
        return;
    }
    /* Unsignaled: an error completion still names the connection. */
    wr->send_flags &= ~(unsigned)IBV_SEND_SIGNALED;
    wr->wr_id = wr_id_make((uintptr_t)c, WR_TAG_CONN);
    c->io->sq_unsignaled++;
    c->io->sq_posted++;
    if (!last)
        return;
    FIFO_PUSH(c->io->lazy_head, c->io->lazy_tail, w, lazy_next);
    c->io->sq_lazy_pending++;
    sq_mark_dirty(c);
}

/* c's open pack (the chain's tail) is about to be posted: nothing joins it any more. */
static void pack_close(struct conn *c, struct ibv_send_wr *tail)
{
    if (tail->sg_list[0].length <= c->max_inline)
        tail->send_flags |= IBV_SEND_INLINE;
    c->io->pack = NULL;
}

/* The test point FAULT_CLIENT_BREAKS: the QP of c breaks under what was just posted. */
static void break_point(struct conn *c)
{
    static unsigned posts;
    if (fault_injected(FAULT_CLIENT_BREAKS) && ++posts % FAULT_BREAK_EVERY == 0)
        rc_qp_to_error(c->qp, "a test break point");
}

/*
 * Posts c's chain, then `wr` (may be NULL) after it, with one ibv_post_send.
 * `for_wait`: someone waits, so the chain's last request is signaled (a
 * post that nobody waits for adds no completion: signal_every bounds the
 * unsignaled runs).
 */
static void post_chain_then(struct conn *c, struct ibv_send_wr *wr, const char *what, bool for_wait)
{
    struct sq_chain *ch = c->io->chain;
    struct ibv_send_wr *first = wr;
    if (ch && ch->n) {
        struct ibv_send_wr *tail = &ch->wr[ch->n - 1];
        if (c->io->pack)
            pack_close(c, tail);
        if (!wr && for_wait)
            promote_tail(c, tail);
        tail->next = wr;
        first = &ch->wr[0];
        if (!wr)
            what = ch->n > 1                          ? "chain of requests"
                   : tail->opcode == IBV_WR_SEND      ? "data-server request"
                   : tail->opcode == IBV_WR_RDMA_READ ? "RDMA read"
                                                      : "RDMA write";
        ch->n = 0;
    }
    if (!first)
        return;
    if (replay_log_on())
        replay_log_append(c, first);
    if (c->io->recovering)
        return; /* its QP is being replaced: the replay posts it */
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(c->qp, first, &bad);
    if (rc)
        armci_die(NULL, "ibv_post_send (%s to node %d) failed: %s", what, c->node, strerror(rc));
    break_point(c);
}

void sq_post(struct conn *c, struct ibv_send_wr *wr, const char *what)
{
    post_chain_then(c, wr, what, false); /* what c's chain holds was issued before wr */
}

void sq_post_chain(struct conn *c)
{
    post_chain_then(c, NULL, NULL, false);
}

void sq_note_remote(struct conn *c, uint64_t addr, uint32_t rkey)
{
    c->io->flush_addr = addr;
    c->io->flush_rkey = rkey;
}

struct sq_retire sq_completed(struct conn *c)
{
    if (c->io->sq_ring_count == 0)
        armci_die(NULL, "a send completion from node %d that no signaled request accounts for",
                  c->node);
    struct sq_retire r = c->io->sq_ring[c->io->sq_ring_head];
    c->io->sq_ring_head = (c->io->sq_ring_head + 1) % c->sq_depth;
    c->io->sq_ring_count--;
    c->io->sq_posted -= (int)r.wrs;
    if (replay_log_on())
        replay_log_retire(c, r.wrs);
    if (c->io->sq_posted < 0)
        armci_die(NULL,
                  "internal error: a completion from node %d retires more requests than "
                  "were posted",
                  c->node);
    signaled--;
    return r;
}

struct work *sq_pop_lazy(struct conn *c)
{
    struct work *w = c->io->lazy_head;
    if (!w)
        armci_die(NULL,
                  "internal error: a completion from node %d retires more lazy works "
                  "than were posted",
                  c->node);
    FIFO_DROP_HEAD(c->io->lazy_head, c->io->lazy_tail, lazy_next);
    return w;
}

/* An empty signaled RDMA write: its completion retires every lazy work before it. */
static bool flush(struct conn *c)
{
#if !ARMCI_MUTANT_IS(chain_not_posted_on_wait)
    post_chain_then(c, NULL, NULL, true); /* its last request, signaled, covers the lazy works */
#endif
    if (c->io->chain && c->io->chain->n)
        return false;
    if (!c->io->sq_lazy_pending)
        return true;
    if (!sq_room(c))
        return false; /* signaled requests are in flight: try again after they complete */
    struct ibv_send_wr wr = {
        .opcode = IBV_WR_RDMA_WRITE,
        .wr = {.rdma = {.remote_addr = c->io->flush_addr, .rkey = c->io->flush_rkey}},
    };
    push_signal(c, &wr, wr_id_make((uintptr_t)c, WR_TAG_CONN));
    sq_post(c, &wr, "flush");
    return true;
}

void sq_flush_all(void)
{
    int kept = 0;
    for (int i = 0; i < ndirty; i++) {
        struct conn *c = dirty[i];
        if (flush(c))
            c->io->sq_dirty = false;
        else
            dirty[kept++] = c;
    }
    ndirty = kept;
}

void sq_forget(struct conn *c)
{
    replay_log_forget(c);
    SWAP_REMOVE(dirty, ndirty, c);
    if (c->io->sq_ring)
        memstat_add(MEM_SEND_QUEUES, -(long)(sizeof(*c->io->sq_ring) * (size_t)c->sq_depth));
    free(c->io->sq_ring);
    c->io->sq_ring = NULL;
    if (c->io->chain)
        memstat_add(MEM_SEND_QUEUES, -(long)chain_bytes(c->io->chain->cap));
    free(c->io->chain);
    c->io->chain = NULL;
    c->io->pack = NULL;
    if (ndirty == 0) {
        free(dirty);
        dirty = NULL;
        capdirty = 0;
    }
}

static void wait_room(struct conn *c)
{
    while (!sq_room(c))
        wait_progress();
}

void sq_wait_room(struct conn *c)
{
    wait_room(c);
}

void sq_post_awaited(struct conn *c, struct ibv_send_wr *wr, struct work *w)
{
    wait_room(c);
    sq_prepare(c, wr, w, true, true);
    sq_post(c, wr, w->what);
}

void sq_batch_flush(struct sq_batch *b)
{
    /* Post them (with what the chain held before), unless the caller's own wait will: a
     * deferred batch nobody waits for yet stays for the next wait, progress call or post. */
#if ARMCI_MUTANT_IS(chain_blocking_deferred)
    b->defer = true;
#endif
    if (b->c && (b->wanted || !b->defer))
        sq_post_chain(b->c);
    sq_batch_init(b, b->defer);
}

/* c's chain, with room for one more request (a full chain is posted first). */
static struct sq_chain *chain_with_room(struct conn *c)
{
    if (!c->io->chain)
        c->io->chain = chain_new(MIN(CHAIN_INITIAL, chain_cap(c)), NULL);
    if (c->io->chain->n >= chain_cap(c))
        sq_post_chain(c);
    if (c->io->chain->n >= c->io->chain->cap) {
        struct sq_chain *old = c->io->chain;
        c->io->chain = chain_new(MIN(2 * old->cap, chain_cap(c)), old);
#if ARMCI_MUTANT_IS(chain_grown_unlinked)
        /* the bug: the moved requests still link and gather through the old chain's memory,
         * scribbled on here as a reused allocation would be */
        memcpy(c->io->chain->wr, old->wr, sizeof(*old->wr) * (size_t)old->n);
        memset(old->sge, 0xa5, sizeof(*old->sge) * (size_t)old->cap);
        memset(old->data, 0xa5, SQ_CHAIN_INLINE * (size_t)old->cap);
#endif
        free(old);
    }
    c->io->pack = NULL; /* what is added follows the pack's SEND: no more joins it */
    return c->io->chain;
}

/* Appends a one-piece request (`len` bytes at `local`) to c's chain, linked behind the one
 * before it, once the send queue has room for it: its index in the chain. */
static int chain_append(struct conn *c, enum ibv_wr_opcode op, void *local, uint32_t lkey,
                        size_t len)
{
    if (!sq_room(c))
        sq_post_chain(c); /* never wait for completions of requests not posted yet */
    wait_room(c);
    struct sq_chain *ch = chain_with_room(c);
    int i = ch->n++;
    ch->sge[i] = (struct ibv_sge){.addr = (uintptr_t)local, .length = (uint32_t)len, .lkey = lkey};
    ch->wr[i] = (struct ibv_send_wr){.sg_list = &ch->sge[i], .num_sge = 1, .opcode = op};
    if (i > 0)
        ch->wr[i - 1].next = &ch->wr[i];
    return i;
}

struct ibv_send_wr *sq_chain_append(struct conn *c, enum ibv_wr_opcode op, void *local,
                                    uint32_t lkey, size_t len)
{
    int i = chain_append(c, op, local, lkey, len); /* may allocate c's chain: first */
    return &c->io->chain->wr[i];
}

struct ibv_send_wr *sq_chain_tail(struct conn *c)
{
    return &c->io->chain->wr[c->io->chain->n - 1];
}

void sq_batch_add(struct sq_batch *b, struct conn *c, enum ibv_wr_opcode op, void *local,
                  uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, struct work *w,
                  bool last, bool wanted)
{
    if (b->c && b->c != c)
        sq_batch_flush(b);
    int i = chain_append(c, op, local, lkey, len);
    struct sq_chain *ch = c->io->chain;
    b->c = c;
    b->wanted |= wanted;
    ch->wr[i].wr.rdma.remote_addr = raddr;
    ch->wr[i].wr.rdma.rkey = rkey;
    /* Small writes are copied into the chain, and from there into the WR: the source is
     * reusable at once. */
    if (op == IBV_WR_RDMA_WRITE && len <= sq_inline_max(c)) {
        if (len == sizeof(uint64_t))
            memcpy(ch->data[i], local, sizeof(uint64_t)); /* the common 8 B put: no call */
        else
            memcpy(ch->data[i], local, len);
        ch->sge[i].addr = (uintptr_t)ch->data[i];
        ch->wr[i].send_flags |= IBV_SEND_INLINE;
    }
    sq_prepare(c, &ch->wr[i], w, last, wanted);
    sq_note_remote(c, raddr, rkey);
    if (b->defer)
        sq_mark_dirty(c); /* the next progress call posts the chain (else sq_batch_flush) */
    w->what = op == IBV_WR_RDMA_WRITE ? "RDMA write" : "RDMA read";
}
