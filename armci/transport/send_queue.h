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
 * queue); per process at most ep.send_budget signaled requests in flight
 * (the shared CQ's room). Unsignaled runs are shorter than signal_every <
 * depth, so a full send queue always holds a signaled request to wait for.
 */
#ifndef ARMCI_TRANSPORT_SEND_QUEUE_H
#define ARMCI_TRANSPORT_SEND_QUEUE_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

struct conn;
struct work;

/* What one signaled completion retires: requests, and lazy works before it. */
struct sq_retire {
    uint32_t wrs;
    uint32_t lazy;
};

/* Whether a request may be posted on c now (its queue and the process's budget). */
bool sq_room(const struct conn *c);
/* Waits (making progress) until sq_room(c). */
void sq_wait_room(struct conn *c);

/*
 * Accounts one request about to be posted on c (room is there: sq_room) and
 * sets its wr_id and whether it is signaled. `w` is the work it belongs to,
 * `last` whether it is the work's last request, `wanted` whether the work's
 * completion is needed soon (else the work may go lazy).
 */
void sq_prepare(struct conn *c, struct ibv_send_wr *wr, struct work *w, bool last, bool wanted);

/* Where a flush may write: any address of c's target the transport may access. */
void sq_note_remote(struct conn *c, uint64_t addr, uint32_t rkey);

/* A signaled completion of c arrived: what it retires (lazy works: sq_pop_lazy). */
struct sq_retire sq_completed(struct conn *c);
struct work *sq_pop_lazy(struct conn *c);

/* Posts a flush on every connection with lazy works not yet covered by a signal. */
void sq_flush_all(void);

/* c goes away (finalize, eviction): its bookkeeping too. */
void sq_forget(struct conn *c);

#endif
