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

#include "odcm/conn.h"

struct work;
struct pool_buffer;

/* Every process can have this many signaled send WRs in flight over all its connections. */
#define SQ_SEND_BUDGET 1024
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

/* A signaled completion of c arrived: what it retires (lazy works: sq_pop_lazy). The
 * handler of send completions that calls them is retire.c's. */
struct sq_retire sq_completed(struct conn *c);
struct work *sq_pop_lazy(struct conn *c);

/* Posts every connection's chain, and a flush on every connection with lazy works not yet
 * covered by a signal. */
void sq_flush_all(void);

/* c goes away (finalize, eviction): its bookkeeping too. */
void sq_forget(struct conn *c);

/*
 * Sets the budget to full. `wait` is how to wait for room: the progress
 * engine's progress_wait, which sits above this file (it retires what is
 * posted here).
 */
void sq_init(void (*wait)(void));

/*
 * RDMA work requests to one connection, in c's chain of requests not yet
 * posted: posted together with one ibv_post_send (one
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
struct sq_batch {
    struct conn *c;
    bool wanted;
    bool defer; /* left in the chain at flush, unless wanted */
};

static inline void sq_batch_init(struct sq_batch *b, bool defer)
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
void sq_batch_add(struct sq_batch *b, struct conn *c, enum ibv_wr_opcode op, void *local,
                  uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, struct work *w,
                  bool last, bool wanted);
void sq_batch_flush(struct sq_batch *b);

/* The largest write sq_batch_add copies (inline in the WR when posted). */
static inline uint32_t sq_inline_max(const struct conn *c)
{
    return c->max_inline < SQ_CHAIN_INLINE ? c->max_inline : SQ_CHAIN_INLINE;
}

/* Posts wr, the one request of w, whose completion is awaited now (after c's chain): waits for
 * room, signals it, and names w->what if the post fails. */
void sq_post_awaited(struct conn *c, struct ibv_send_wr *wr, struct work *w);

/* Waits (making progress) until a request may be posted on c. */
void sq_wait_room(struct conn *c);

/* Posts c's chain now (the flush before a wait also signals its last request). */
void sq_post_chain(struct conn *c);

/* c has a lazy work, or a chain for the next progress call to post: sq_flush_all sees it. */
void sq_mark_dirty(struct conn *c);

/* For packs (requests.c): appends a one-piece request (len bytes at local) to c's chain,
 * once its send queue has room (to be prepared: sq_prepare); the chain's last request. While
 * a pack is open it is the chain's tail, and posting the chain closes it (c->io->pack). */
struct ibv_send_wr *sq_chain_append(struct conn *c, enum ibv_wr_opcode op, void *local,
                                    uint32_t lkey, size_t len);
struct ibv_send_wr *sq_chain_tail(struct conn *c);

#endif
