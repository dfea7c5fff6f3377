/*
 * The send side of a client connection (send_queue.h): room, selective
 * signaling and retiring, and posting: chains of RDMA requests, and whole
 * requests to the data server.
 */
#include "transport/send_queue.h"

#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/util.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/wr_id.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/work.h"
#include "verbs/rc_qp.h"

/* Connections with lazy works that no signaled request covers yet. */
static struct conn **dirty;
static int ndirty, capdirty;

/* Signaled requests in flight over all connections (at most SQ_SEND_BUDGET). */
static int signaled;
/* Reply buffers not promised to a message yet (REPLY_BUFS at first): messages that may still
 * be sent. A lock request takes two (a waiting lock is answered twice). */
static int reply_slots;
/* Lock requests of this process not granted yet (at most MAX_LOCK_REQUESTS). */
static int lock_requests;
#define MAX_LOCK_REQUESTS (REPLY_BUFS / 4)

static void (*wait_progress)(void);

void sq_init(void (*wait)(void))
{
    wait_progress = wait;
    signaled = 0;
    reply_slots = REPLY_BUFS;
    lock_requests = 0;
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
    struct ibv_send_wr wr[SQ_CHAIN_MAX];
    struct ibv_sge sge[SQ_CHAIN_MAX];
    uint64_t data[SQ_CHAIN_MAX][SQ_CHAIN_INLINE / sizeof(uint64_t)];
};

/* How many requests a chain holds before it is posted: half the send queue, so that on an
 * adapter one chain moves while the next fills. */
static int chain_cap(const struct conn *c)
{
    int half = c->sq_depth / 2 > 0 ? c->sq_depth / 2 : 1;
    return half < SQ_CHAIN_MAX ? half : SQ_CHAIN_MAX;
}

uint32_t sq_inline_max(const struct conn *c)
{
    return c->max_inline < SQ_CHAIN_INLINE ? c->max_inline : SQ_CHAIN_INLINE;
}

static void mark_dirty(struct conn *c)
{
    if (c->io->sq_dirty)
        return;
    if (ndirty == capdirty) {
        capdirty = capdirty ? 2 * capdirty : 8;
        dirty = xrealloc(dirty, sizeof(*dirty) * (size_t)capdirty);
    }
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
    w->lazy_next = NULL;
    if (c->io->lazy_tail)
        c->io->lazy_tail->lazy_next = w;
    else
        c->io->lazy_head = w;
    c->io->lazy_tail = w;
    c->io->sq_lazy_pending++;
    mark_dirty(c);
}

/* c's open pack (the chain's tail) is about to be posted: nothing joins it any more. */
static void pack_close(struct conn *c, struct ibv_send_wr *tail)
{
    if (tail->sg_list[0].length <= c->max_inline)
        tail->send_flags |= IBV_SEND_INLINE;
    c->io->pack = NULL;
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
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(c->qp, first, &bad);
    if (rc)
        armci_die(NULL, "ibv_post_send (%s to node %d) failed: %s", what, c->node, strerror(rc));
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
    c->io->lazy_head = w->lazy_next;
    if (!c->io->lazy_head)
        c->io->lazy_tail = NULL;
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
    for (int i = 0; i < ndirty; i++) {
        if (dirty[i] == c) {
            dirty[i] = dirty[--ndirty];
            break;
        }
    }
    if (c->io->sq_ring)
        memstat_add(MEM_SEND_QUEUES, -(long)(sizeof(*c->io->sq_ring) * (size_t)c->sq_depth));
    free(c->io->sq_ring);
    c->io->sq_ring = NULL;
    if (c->io->chain)
        memstat_add(MEM_SEND_QUEUES, -(long)sizeof(*c->io->chain));
    free(c->io->chain);
    c->io->chain = NULL;
    c->io->pack = NULL;
    if (ndirty == 0) {
        free(dirty);
        dirty = NULL;
        capdirty = 0;
    }
}

/* The completion of one work's request, in work order (reads: the data is there). */
static void work_request_done(struct work *f)
{
    switch (f->kind) {
    case WORK_READ:
    case WORK_WRITE:
        work_complete(f);
        break;
    case WORK_MESSAGE:
        /* The request buffer (and a payload sent in place) is free; the operation waits
         * for its reply. */
        bounce_free(f->bounce);
        f->bounce = NULL;
        if (f->sent)
            handle_op_done(f->sent);
        f->sent = NULL;
        if (--f->events_left == 0)
            work_complete(f);
        break;
    }
}

/*
 * A request that failed. A node whose adapter stopped acknowledging (retry
 * counter exceeded) is lost: its host is down, hung or cut off. The job
 * cannot go on without the memory and the data server of that node: say
 * which node and host, and end it.
 */
static void failed(const struct work *f, const struct conn *c, const struct ibv_wc *wc)
{
    char node[160];
    topo_describe_node(c->node, node, sizeof(node));
    if (wc->status == IBV_WC_RETRY_EXC_ERR)
        armci_die(NULL,
                  "%s is lost: its adapter stopped answering (%s, after %s; "
                  "ARMCI_IB_RETRY=%d retransmissions of ARMCI_IB_TIMEOUT=%d): "
                  "the host is down, hung or unreachable",
                  node, ibv_wc_status_str(wc->status), f ? f->what : "an RDMA operation",
                  cfg.ib_retry, cfg.ib_timeout);
    if (wc->status == IBV_WC_LOC_QP_OP_ERR)
        armci_die(NULL,
                  "%s to %s failed: %s: this host could not send to it (on RoCE, its own "
                  "network link going down gives this)",
                  f ? f->what : "an RDMA operation", node, ibv_wc_status_str(wc->status));
    armci_die(NULL, "%s to %s failed: %s (vendor error 0x%x)", f ? f->what : "an RDMA operation",
              node, ibv_wc_status_str(wc->status), wc->vendor_err);
}

/*
 * A signaled send completion: it retires the run of requests before it on
 * its connection (send_queue.h), the lazy works among them first, then its
 * own work if it is a work's last request (tag POINTER) rather than a
 * flush or a signal inside a run (tag CONN).
 */
void sq_on_send_completion(void *ctx, const struct ibv_wc *wc)
{
    bool own = wr_id_tag(wc->wr_id) == WR_TAG_POINTER;
    struct work *f = own ? wr_id_pointer(wc->wr_id) : NULL;
    struct conn *c = own ? f->conn : wr_id_pointer(wc->wr_id);
    if (wc->status != IBV_WC_SUCCESS)
        failed(f, c, wc);
    struct sq_retire r = sq_completed(c);
    for (uint32_t i = 0; i < r.lazy; i++)
        work_request_done(sq_pop_lazy(c));
    if (f)
        work_request_done(f);
}

static void wait_room(struct conn *c)
{
    while (!sq_room(c))
        wait_progress();
}

void sq_post_awaited(struct conn *c, struct ibv_send_wr *wr, struct work *w)
{
    wait_room(c);
    sq_prepare(c, wr, w, true, true);
    sq_post(c, wr, w->what);
}

struct pool_buffer *bounce_wait(void)
{
    struct pool_buffer *b;
    while (!(b = bounce_try_get()))
        wait_progress();
    return b;
}

void reserve_lock_request(void)
{
    while (reply_slots <= 0 || lock_requests >= MAX_LOCK_REQUESTS)
        wait_progress();
    reply_slots--;
    lock_requests++;
}

void lock_granted(void)
{
    lock_requests--;
}

void reply_slot_return(void)
{
    reply_slots++;
}

/* A reply slot for one more request (waits for one). */
static void reserve_reply_slot(void)
{
    while (reply_slots <= 0)
        wait_progress();
    reply_slots--;
}

/* A credit on c for one more SEND to its data server (waits for one). */
static void reserve_credit(struct conn *c)
{
    while (c->io->credits <= 0)
        wait_progress();
    c->io->credits--;
}

void rdma_batch_flush(struct rdma_batch *b)
{
    /* Post them (with what the chain held before), unless the caller's own wait will: a
     * deferred batch nobody waits for yet stays for the next wait, progress call or post. */
#if ARMCI_MUTANT_IS(chain_blocking_deferred)
    b->defer = true;
#endif
    if (b->c && (b->wanted || !b->defer))
        sq_post_chain(b->c);
    rdma_batch_init(b, b->defer);
}

/* c's chain, with room for one more request (a full chain is posted first). */
static struct sq_chain *chain_with_room(struct conn *c)
{
    if (!c->io->chain) {
        c->io->chain = xmalloc(sizeof(*c->io->chain));
        c->io->chain->n = 0;
        memstat_add(MEM_SEND_QUEUES, (long)sizeof(*c->io->chain));
    }
    if (c->io->chain->n >= chain_cap(c))
        sq_post_chain(c);
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

void rdma_batch_add(struct rdma_batch *b, struct conn *c, enum ibv_wr_opcode op, void *local,
                    uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, struct work *w,
                    bool last, bool wanted)
{
    if (b->c && b->c != c)
        rdma_batch_flush(b);
    int i = chain_append(c, op, local, lkey, len);
    struct sq_chain *ch = c->io->chain;
    b->c = c;
    b->wanted |= wanted;
    ch->wr[i].wr.rdma.remote_addr = raddr;
    ch->wr[i].wr.rdma.rkey = rkey;
    /* Small writes are copied into the chain, and from there into the WR: the source is
     * reusable at once. */
    if (op == IBV_WR_RDMA_WRITE && len <= sq_inline_max(c)) {
        memcpy(ch->data[i], local, len);
        ch->sge[i].addr = (uintptr_t)ch->data[i];
        ch->wr[i].send_flags |= IBV_SEND_INLINE;
    }
    sq_prepare(c, &ch->wr[i], w, last, wanted);
    sq_note_remote(c, raddr, rkey);
    if (b->defer)
        mark_dirty(c); /* the next progress call posts the chain (else rdma_batch_flush) */
    w->what = op == IBV_WR_RDMA_WRITE ? "RDMA write" : "RDMA read";
}

void post_write_copy(struct conn *c, const void *src, size_t len, uint64_t raddr, uint32_t rkey,
                     struct handle *req)
{
    struct pool_buffer *b = bounce_wait();
    memcpy(b->addr, src, len);
    struct work *w = work_new(WORK_WRITE, c, req);
    w->bounce = b; /* freed when the write completes */
    struct rdma_batch batch;
    rdma_batch_init(&batch, false);
    rdma_batch_add(&batch, c, IBV_WR_RDMA_WRITE, b->addr, b->lkey, len, raddr, rkey, w, true, true);
    rdma_batch_flush(&batch);
}

/* The header of r at `to`: as described, with what post_request fills in. */
static struct ds_message *write_header(struct conn *c, const struct request_desc *r, void *to)
{
    struct ds_message *msg = to;
    *msg = r->msg;
    sq_note_remote(c, r->t->server_addr, r->t->rkey); /* a place a flush or a probe may name */
    if (r->verbatim)
        return msg;
    msg->origin = rt.me;
    msg->target_local = topo_local_index(r->t->proc);
    msg->addr = r->t->server_addr + r->offset;
    return msg;
}

/* The SEND of a message in b (len bytes), followed by the npayload pieces in payload. */
static void post_send(struct conn *c, struct pool_buffer *b, size_t len,
                      const struct ibv_sge *payload, int npayload, struct work *w)
{
    struct ibv_sge sge[RC_QP_MAX_SGE];
    size_t total = len;
    sge[0] = (struct ibv_sge){.addr = (uintptr_t)b->addr, .length = (uint32_t)len, .lkey = b->lkey};
    for (int i = 0; i < npayload; i++) {
        sge[1 + i] = payload[i];
        total += payload[i].length;
    }
    struct ibv_send_wr wr = {
        .sg_list = sge,
        .num_sge = 1 + npayload,
        .opcode = IBV_WR_SEND,
    };
    if (total <= c->max_inline)
        wr.send_flags |= IBV_SEND_INLINE;
    w->bounce = b;
    w->events_left = 2;
    sq_post_awaited(c, &wr, w); /* its send completion frees the bounce buffer */
}

/*
 * Packs: a non-blocking update's SEND waits at the tail of c's chain, and
 * the updates that follow on c join it, back to back in its buffer
 * (dataserver/protocol.h), until the chain is posted. Many small
 * accumulates then cost the server one receive and the client one credit,
 * instead of one each.
 */

/* Whether r may share its SEND: an update (protocol.h) whose payload is copied behind it. */
static bool shares_send(const struct request_desc *r)
{
    return ds_op_shares_send(r->msg.op) && !r->verbatim && !r->ngather && !r->reply_to_bounce &&
           !r->sent;
}

/* Whether r fits behind the requests of c's open pack (a SEND fills a server's buffer). */
static bool pack_has_room(const struct conn *c, const struct request_desc *r)
{
    return c->io->pack && c->io->pack_next + r->payload <= request_room();
}

/* Puts the SEND of w's message (len bytes in b) at the tail of c's chain, open for more. */
static void pack_open(struct conn *c, struct pool_buffer *b, struct ds_message *msg, size_t len,
                      struct work *w)
{
    int i = chain_append(c, IBV_WR_SEND, b->addr, b->lkey, len);
    w->bounce = b;
    w->events_left = 2;
    sq_prepare(c, &c->io->chain->wr[i], w, true, true); /* its send completion frees the buffer */
    mark_dirty(c); /* the next progress call posts it, if nobody waits before */
    c->io->pack = b;
    c->io->pack_last = msg;
    c->io->pack_next = ds_shared_step(len - sizeof(*msg));
}

/* The work of a request: counted, awaiting its reply, with what its reply is to fill in. */
static struct work *request_work(struct conn *c, const struct request_desc *r,
                                 struct pool_buffer *data)
{
    struct work *w = work_new(WORK_MESSAGE, c, r->req);
    /* Every request but a lock's is answered in order (dataserver/protocol.h). */
    work_await_reply(w, r->msg.op != DS_LOCK);
    w->result = r->result;
    w->status = r->status;
    w->data = data;
    w->on_done = r->on_done;
    w->ctx = r->ctx;
    w->what = r->what;
    w->server_update = ds_op_is_update(r->msg.op);
    c->io->updates_sent += w->server_update;
    if (r->unfenced)
        work_not_fenced(w);
    if (r->sent) {
        w->sent = r->sent;
        handle_op_started(r->sent);
    }
    return w;
}

/* Writes r behind the requests of c's open pack: no buffer, no credit, no SEND of its own. */
static struct work *pack_join(struct conn *c, const struct request_desc *r)
{
    struct conn_io *io = c->io;
    size_t at = io->pack_next;
    struct ds_message *msg = write_header(c, r, (char *)io->pack->addr + at);
    struct work *w = request_work(c, r, NULL);
    w->events_left = 1; /* its answer: the SEND's completion is the pack's first work's */
    msg->token = w->token;
    if (r->fill)
        r->fill(msg + 1, r->fill_ctx);
#if !ARMCI_MUTANT_IS(pack_more_unset)
    io->pack_last->more = 1;
#endif
    io->pack_last = msg;
    io->pack_next = at + ds_shared_step(r->payload);
#if ARMCI_MUTANT_IS(pack_unpadded)
    io->pack_next = at + sizeof(*msg) + r->payload;
#endif
    io->chain->sge[io->chain->n - 1].length = (uint32_t)(at + sizeof(*msg) + r->payload);
    if (!r->defer)
        sq_post_chain(c);
    return w;
}

struct work *post_request(struct conn *c, const struct request_desc *r)
{
    bool shares = shares_send(r);
    reserve_reply_slot();
    if (shares && pack_has_room(c, r))
        return pack_join(c, r);
    reserve_credit(c);
    struct pool_buffer *b = bounce_wait();
    struct pool_buffer *data = r->reply_to_bounce ? bounce_wait() : NULL;
    struct work *w = request_work(c, r, data);
    struct ds_message *msg = write_header(c, r, b->addr);
    msg->token = w->token;
    if (data) {
        msg->reply_addr = (uintptr_t)data->addr;
        msg->reply_rkey = data->rkey;
    }
    if (r->fill)
        r->fill(msg + 1, r->fill_ctx);
    size_t len = sizeof(*msg) + (r->ngather ? 0 : r->payload);
    if (shares && r->defer)
        pack_open(c, b, msg, len, w);
    else
        post_send(c, b, len, r->gather, r->ngather, w);
    return w;
}
