/*
 * Requests to the data server of a connection's node (requests.h): the
 * reply slots and credits they take, their header and payload, the SEND,
 * and packs of updates sharing one SEND.
 */
#include "transport/requests.h"

#include <string.h>

#include "core/mutant.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/numbering.h"
#include "transport/replay_log.h"
#include "transport/send_queue.h"
#include "transport/work.h"
#include "verbs/rc_qp.h"

/* Reply buffers not promised to a message yet (REPLY_BUFS at first): messages that may still
 * be sent. A lock request takes two (a waiting lock is answered twice). */
static int reply_slots;
/* Lock requests of this process not granted yet (at most MAX_LOCK_REQUESTS). */
static int lock_requests;
#define MAX_LOCK_REQUESTS (REPLY_BUFS / 4)

static void (*wait_progress)(void);

void request_init(void (*wait)(void))
{
    wait_progress = wait;
    reply_slots = REPLY_BUFS;
    lock_requests = 0;
}

/* With recovery on, a waiting lock request keeps its (small) buffer (replay_log.h): at most
 * half of them wait, so that the unlocks they wait for find buffers. */
static int max_lock_requests(void)
{
    int half = cfg.bounce_count / 2;
    return replay_log_on() && half < MAX_LOCK_REQUESTS ? (half > 0 ? half : 1) : MAX_LOCK_REQUESTS;
}

void request_lock_reserve(void)
{
    while (reply_slots <= 0 || lock_requests >= max_lock_requests())
        wait_progress();
    reply_slots--;
    lock_requests++;
}

void request_lock_granted(void)
{
    lock_requests--;
}

void request_slot_return(void)
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

/* The header of r at `to`: as described, with what request_post fills in. */
static struct ds_message *write_header(const struct request_desc *r, void *to)
{
    struct ds_message *msg = to;
    *msg = r->msg;
    if (r->verbatim)
        return msg;
    msg->origin = rt.me;
    msg->target_local = topo_local_index(r->t->proc);
    msg->addr = r->t->server_addr + r->offset;
    return msg;
}

/*
 * The node's next request number for msg (numbering.h), given when msg's
 * place in c's send queue is certain (nothing waits between this and its
 * post): requests reach the server in the order of their numbers
 * (dataserver/engine.h).
 */
static void number(struct conn *c, struct ds_message *msg)
{
    msg->seq = numbering_next(c->node);
}

/* w's SEND is in b (len bytes so far): the buffer is w's, or with recovery on its record's,
 * which keeps it until the SEND's last request is answered. A pulled payload (`pulled`) is
 * read from b by the server until it answers. */
static void own_send_buffer(struct work *w, struct pool_buffer *b, size_t len, uint64_t seq,
                            const struct ibv_sge *in_place, int n_in_place, bool pulled)
{
    w->events_left = 2;
    if (!replay_log_on()) {
        if (pulled)
            w->data = b; /* freed when the work completes, at its answer */
        else
            w->bounce = b; /* its send completion frees it */
        return;
    }
    w->rec = send_rec_new(b, seq, in_place, n_in_place);
    w->rec->len = (uint32_t)len;
    w->rec->last = w;
}

/* The SEND of a message in b (len bytes), followed by the npayload pieces in payload; the
 * server pulls the rest of b if the message says DS_PULLED. */
static void post_send(struct conn *c, const struct target *t, struct pool_buffer *b, size_t len,
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
    sq_note_remote(c, t->server_addr, t->rkey); /* a place a flush or a probe may name */
    sq_wait_room(c);
    struct ds_message *msg = b->addr;
    number(c, msg);
    own_send_buffer(w, b, len, msg->seq, payload, npayload, msg->flags & DS_PULLED);
    sq_post_awaited(c, &wr, w);
}

/*
 * Packs: a non-blocking update's SEND waits at the tail of c's chain, and
 * the updates that follow on c join it, back to back in its buffer
 * (wire/protocol.h), until the chain is posted. Many small
 * accumulates then cost the server one receive and the client one credit,
 * instead of one each.
 */

/* Whether r may share its SEND: an update (protocol.h) whose payload is copied behind it,
 * within the server's request buffer. Not one the server pulls in place (`pull_from`): its
 * header alone is its SEND, and a request joining it would make it one whose implied payload
 * follows (DS_MORE), which the server refuses. */
static bool shares_send(const struct request_desc *r)
{
    bool pulled_in_place = r->pull_from != NULL;
#if ARMCI_MUTANT_IS(pulled_in_place_shares)
    pulled_in_place = false;
#endif
    return ds_op_shares_send(r->msg.op) && !r->verbatim && !r->ngather && !r->reply_to_bounce &&
           !r->sent && !pulled_in_place && r->payload <= request_room();
}

/* Whether r's payload is pulled by the server (wire/protocol.h): copied past what the
 * server's request buffer holds. */
static bool pulled(const struct request_desc *r)
{
    return !r->verbatim && !r->ngather && r->payload > request_room();
}

/* Whether r fits behind the requests of c's open pack (a SEND fills a server's buffer). */
static bool pack_has_room(const struct conn *c, const struct request_desc *r)
{
    return c->io->pack && c->io->pack_next + r->payload <= request_room();
}

/* Puts the SEND of w's message (len bytes in b) at the tail of c's chain, open for more. */
static void pack_open(struct conn *c, const struct target *t, struct pool_buffer *b,
                      struct ds_message *msg, size_t len, struct work *w)
{
    sq_note_remote(c, t->server_addr, t->rkey); /* a place a flush or a probe may name */
    struct ibv_send_wr *wr = sq_chain_append(c, IBV_WR_SEND, b->addr, b->lkey, len);
    number(c, msg);
    own_send_buffer(w, b, len, msg->seq, NULL, 0, false);
    sq_prepare(c, wr, w, true, true);
    sq_mark_dirty(c); /* the next progress call posts it, if nobody waits before */
    c->io->pack = b;
    c->io->pack_rec = w->rec;
    c->io->pack_last = msg;
    c->io->pack_next = ds_shared_step(len - sizeof(*msg));
}

/* The buffer of r's SEND: its header and the payload copied behind it. A small buffer when
 * they fit one (most requests: a server's request buffer holds them); a bounce buffer, which
 * the server may read, for a payload it pulls. */
static struct pool_buffer *message_buffer(const struct request_desc *r)
{
#if ARMCI_MUTANT_IS(requests_in_bounce_buffers)
    return bounce_wait(); /* the bug: 64 KiB for every request */
#endif
    if (pulled(r))
        return bounce_wait();
    return send_buffer_wait(sizeof(struct ds_message) + r->payload);
}

/* The work of a request: counted, awaiting its reply, with what its reply is to fill in. With
 * `b`, the request has a SEND of its own: first a buffer for its message (*b), and a bounce
 * buffer for its reply data if r wants one (the work's data). */
static struct work *request_work(struct conn *c, const struct request_desc *r,
                                 struct pool_buffer **b)
{
    struct pool_buffer *data = NULL;
    if (b) {
        *b = message_buffer(r);
        data = r->reply_to_bounce ? bounce_wait() : NULL;
    }
    struct work *w = work_new(WORK_MESSAGE, c, r->req);
    /* Every request but a lock's is answered in order (wire/protocol.h). */
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
    sq_note_remote(c, r->t->server_addr, r->t->rkey); /* a place a flush or a probe may name */
    struct ds_message *msg = write_header(r, (char *)io->pack->addr + at);
    struct work *w = request_work(c, r, NULL);
    w->events_left = 1; /* its answer: the SEND's completion is the pack's first work's */
    msg->token = w->token;
    number(c, msg);
    if (r->fill)
        r->fill(msg + 1, r->fill_ctx);
#if !ARMCI_MUTANT_IS(pack_more_unset)
    io->pack_last->flags |= DS_MORE;
#endif
    io->pack_last = msg;
    io->pack_next = at + ds_shared_step(r->payload);
#if ARMCI_MUTANT_IS(pack_unpadded)
    io->pack_next = at + sizeof(*msg) + r->payload;
#endif
    sq_chain_tail(c)->sg_list[0].length = (uint32_t)(at + sizeof(*msg) + r->payload);
    if (io->pack_rec) { /* the SEND's buffer lives until its last request is answered */
        io->pack_rec->len = (uint32_t)(at + sizeof(*msg) + r->payload);
        io->pack_rec->last = w;
        w->rec = io->pack_rec;
    }
    if (!r->defer)
        sq_post_chain(c);
    return w;
}

static struct work *post_request(struct conn *c, const struct request_desc *r)
{
    bool shares = shares_send(r);
    reserve_reply_slot();
    if (shares && pack_has_room(c, r))
        return pack_join(c, r);
    reserve_credit(c);
    struct pool_buffer *b;
    struct work *w = request_work(c, r, &b);
    struct ds_message *msg = write_header(r, b->addr);
    msg->token = w->token;
    if (w->data) {
        msg->reply_addr = (uintptr_t)w->data->addr;
        msg->reply_rkey = w->data->rkey;
    }
    if (r->fill)
        r->fill(msg + 1, r->fill_ctx);
    size_t len = sizeof(*msg) + (r->ngather ? 0 : r->payload);
    if (pulled(r)) {
        msg->flags |= DS_PULLED;
        msg->reply_addr = (uintptr_t)(msg + 1);
        msg->reply_rkey = b->rkey;
        len = sizeof(*msg);
    } else if (r->pull_from) {
        msg->flags |= DS_PULLED;
        msg->reply_addr = (uintptr_t)r->pull_from;
        msg->reply_rkey = r->pull_rkey;
    }
    if (shares && r->defer)
        pack_open(c, r->t, b, msg, len, w);
    else
        post_send(c, r->t, b, len, r->gather, r->ngather, w);
    return w;
}

struct work *request_post(struct conn *c, const struct request_desc *r)
{
    /* One sequence space for both carriers: while this request is under way no datagram to
     * the node starts (the connection counts as busy), and it is numbered only once the
     * node's datagrams are answered (numbering.h; with threads, another thread's may be). */
    c->io->posting++;
    while (numbering_ud_busy(c->node))
        wait_progress();
    struct work *w = post_request(c, r);
    c->io->posting--;
    return w;
}
