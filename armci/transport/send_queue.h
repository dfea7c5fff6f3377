/*
 * The send queue of a client connection: room, selective signaling, and
 * what a completion retires.
 *
 * Not every work request asks for a completion. The requests of one QP
 * complete in order, so one signaled completion also vouches for every
 * unsignaled request posted before it. A request is signaled when someone
 * needs its completion soon (a blocking call waits for it, a bounce buffer
 * is to be given back, data is to be unpacked, a data-server message), and
 * otherwise once every `signal_every` requests, so that a stream of small
 * puts costs one completion per run instead of one each (UCX's rc_mlx5
 * does the same). A work whose last request went unsignaled is "lazy": the
 * next signaled completion on its connection completes it; whoever waits
 * for one sends a flush (an empty, signaled RDMA write) first, through
 * sq_flush_all, which the progress engine calls before it waits.
 *
 * Limits: per connection at most `depth` requests posted (the QP's send
 * queue); per process at most SQ_SEND_BUDGET signaled requests in flight
 * (the shared CQ's room). Unsignaled runs are shorter than signal_every <
 * depth, so a full send queue always holds a signaled request to wait for.
 */
#ifndef ARMCI_TRANSPORT_SEND_QUEUE_H
#define ARMCI_TRANSPORT_SEND_QUEUE_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/util.h"
#include "dataserver/protocol.h"
#include "transport/handle.h"
#include "transport/target.h"

struct conn;
struct work;
struct pool_buffer;

/* Every process can have this many signaled send WRs in flight over all its connections. */
#define SQ_SEND_BUDGET 1024
/* Replies that can be outstanding over all connections (one receive buffer each: replies.h). */
#define REPLY_BUFS 256

/* What one signaled completion retires: requests, and lazy works before it. */
struct sq_retire {
    uint32_t wrs;
    uint32_t lazy;
};

/* Whether a request may be posted on c now (its queue and the process's budget). */
bool sq_room(const struct conn *c);

/*
 * Accounts one request about to be posted on c (room is there: sq_room) and
 * sets its wr_id and whether it is signaled. `w` is the work it belongs to,
 * `last` whether it is the work's last request, `wanted` whether the work's
 * completion is needed soon (else the work may go lazy).
 */
void sq_prepare(struct conn *c, struct ibv_send_wr *wr, struct work *w, bool last, bool wanted);

/* Posts the chain wr (prepared by sq_prepare) on c, after the requests c's chain holds;
 * a failure ends the job, naming `what`. */
void sq_post(struct conn *c, struct ibv_send_wr *wr, const char *what);

/* Where a flush may write: any address of c's target the transport may access. */
void sq_note_remote(struct conn *c, uint64_t addr, uint32_t rkey);

/* A signaled completion of c arrived: what it retires (lazy works: sq_pop_lazy). */
struct sq_retire sq_completed(struct conn *c);
struct work *sq_pop_lazy(struct conn *c);

/*
 * The handler of send completions on the client CQ: a signaled completion
 * retires the run of requests before it on its connection (the lazy works
 * among them, then its own work); a failed one ends the job, naming the
 * node (a lost node's adapter stops acknowledging).
 */
struct ibv_wc;
void sq_on_send_completion(void *ctx, const struct ibv_wc *wc);

/* Posts every connection's chain, and a flush on every connection with lazy works not yet
 * covered by a signal. */
void sq_flush_all(void);

/* c goes away (finalize, eviction): its bookkeeping too. */
void sq_forget(struct conn *c);

/*
 * Sets the budgets to full. `wait` is how to wait for room, a credit, a
 * reply slot or a bounce buffer: the progress engine's progress_wait,
 * which sits above this file (it retires what is posted here).
 */
void sq_init(void (*wait)(void));

/* A free bounce buffer: waits (making progress) for one. */
struct pool_buffer *bounce_wait(void);

/*
 * Before a lock request's post_request: reserves the second reply slot a
 * lock request needs (a waiting lock is answered twice:
 * dataserver/protocol.h), and waits while too many lock requests of this
 * process wait already. A waiting lock holds a reply slot until its grant:
 * the bound keeps most slots for the holders' unlocks and the rest of the
 * traffic. Undone by lock_granted.
 */
void reserve_lock_request(void);
void lock_granted(void);
/* An answer came: its reply slot is free again (replies.c). */
void reply_slot_return(void);

/*
 * RDMA work requests to one connection, in c's chain of requests not yet
 * posted (send_queue.c): posted together with one ibv_post_send (one
 * doorbell on hardware, one batch in softib) when someone waits or makes
 * progress, when another request is posted on c, or when the chain is
 * full. Add, then flush: flushing posts the chain at once unless the
 * batch was begun with `defer` and no request added was `wanted` (its
 * completion waited for now). Only a non-blocking call defers: its caller
 * must wait for it (or fence) later, and that wait posts the chain; a
 * blocking call returns with its requests posted, whoever waits for them.
 */
#define SQ_CHAIN_MAX 64
/* Writes up to this many bytes (and the QP's max_inline) are copied into the chain. */
#define SQ_CHAIN_INLINE 128
struct rdma_batch {
    struct conn *c;
    bool wanted;
    bool defer; /* left in the chain at flush, unless wanted */
};

static inline void rdma_batch_init(struct rdma_batch *b, bool defer)
{
    b->c = NULL;
    b->wanted = false;
    b->defer = defer;
}

/*
 * One request of work w: `last` if it is w's last, `wanted` if w's
 * completion is awaited soon (otherwise w may complete lazily). A write of
 * at most sq_inline_max(c) bytes is copied: `local` is free at return.
 */
void rdma_batch_add(struct rdma_batch *b, struct conn *c, enum ibv_wr_opcode op, void *local,
                    uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, struct work *w,
                    bool last, bool wanted);
void rdma_batch_flush(struct rdma_batch *b);

/* The largest write rdma_batch_add copies (inline in the WR when posted). */
uint32_t sq_inline_max(const struct conn *c);

/* Posts wr, the one request of w, whose completion is awaited now (after c's chain): waits for
 * room, signals it, and names w->what if the post fails. */
void sq_post_awaited(struct conn *c, struct ibv_send_wr *wr, struct work *w);

/* Posts c's chain now (the flush before a wait also signals its last request). */
void sq_post_chain(struct conn *c);

/* A write of len bytes (at most one bounce buffer) to raddr, copied from src into a bounce
 * buffer first (src is free at return), counted in req until it completes. */
void post_write_copy(struct conn *c, const void *src, size_t len, uint64_t raddr, uint32_t rkey,
                     struct handle *req);

/*
 * One request to the data server of c's node, as the caller describes it;
 * post_request builds all of it (a credit and a reply slot, a bounce buffer
 * for the message, the header, the payload, its work and reply token) and
 * posts it. `msg` holds the op and its own fields (len, stride, datatype,
 * scale, value, rmw_op, reply_addr); post_request fills in origin,
 * target_local and addr (t, offset bytes in) and the token. An update
 * whose payload is copied may join the SEND at the tail of c's chain that
 * a deferred one opened (a pack: send_queue.c), taking no credit or
 * buffer of its own.
 */
struct request_desc {
    struct ds_message msg;
    const struct target *t;
    size_t offset;
    bool verbatim; /* msg goes as given but for its token (tests of the server's checks) */
    /* The payload after the header: `payload` bytes written by fill(to, fill_ctx), or the
     * ngather pieces of registered memory in gather (at most the QP's max_sge - 1), sent in
     * place by the SEND, nothing copied. */
    size_t payload;
    void (*fill)(void *to, const void *fill_ctx);
    const void *fill_ctx;
    const struct ibv_sge *gather;
    int ngather;
    bool reply_to_bounce; /* the server writes reply data into a bounce buffer (work's data) */
    void (*on_done)(struct work *f); /* then: runs on the work's completion, with ctx */
    void *ctx;
    /* A non-blocking caller's update: its SEND may wait in c's chain for more updates to join
     * it (one SEND, one credit: dataserver/protocol.h) until the caller waits, the next
     * progress call, or another post on c. */
    bool defer;
    struct handle *req;  /* counts the work until its reply */
    struct handle *sent; /* in place: counts it until the SEND completes (may be NULL) */
    int64_t *result;     /* where the reply's value goes */
    int32_t *status;     /* where the reply's status goes; NULL: a rejection is fatal */
    bool unfenced;       /* a lock request: no fence waits for its grant */
    const char *what;    /* for error messages */
};
struct work *post_request(struct conn *c, const struct request_desc *r);

/* Room for payload behind the header in one request to the data server (a SEND fills one
 * bounce buffer on our side, one receive buffer on the server's). */
static inline size_t request_room(void)
{
    return MIN(cfg.server_buf_size, cfg.bounce_size) - sizeof(struct ds_message);
}

#endif
