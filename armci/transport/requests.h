/*
 * Requests to the data server of a connection's node. Each takes a reply
 * slot of the process (REPLY_BUFS: one posted reply buffer each,
 * replies.h) and a credit of its connection (the server's terms, given
 * back with answers), a buffer for the message (a small one: work.h), and goes as one
 * SEND after the requests c's chain holds (send_queue.h). Updates whose
 * payload is copied may share a SEND (a pack, wire/protocol.h).
 */
#ifndef ARMCI_TRANSPORT_REQUESTS_H
#define ARMCI_TRANSPORT_REQUESTS_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/util.h"
#include "wire/protocol.h"
#include "transport/handle.h"
#include "transport/target.h"
#include "transport/work.h"

struct conn;

/* Replies that can be outstanding over all connections (one receive buffer each: replies.h). */
#define REPLY_BUFS DS_MAX_UNANSWERED

/* Sets the reply slots to full. `wait` is how to wait for a slot or a credit: the progress
 * engine's progress_wait, which sits above this file (replies give them back). */
void request_init(void (*wait)(void));

/*
 * Before a lock request's request_post: reserves the second reply slot a
 * lock request needs (a waiting lock is answered twice:
 * wire/protocol.h), and waits while too many lock requests of this
 * process wait already. A waiting lock holds a reply slot until its grant:
 * the bound keeps most slots for the holders' unlocks and the rest of the
 * traffic. Undone by request_lock_granted.
 */
void request_lock_reserve(void);
void request_lock_granted(void);
/* An answer came: its reply slot is free again (replies.c). */
void request_slot_return(void);

/*
 * One request to the data server of c's node, as the caller describes it;
 * request_post builds all of it (a credit and a reply slot, a buffer for
 * the message, the header, the payload, its work and reply token) and
 * posts it. `msg` holds the op and its own fields (len, stride, datatype,
 * scale, value, rmw_op, reply_addr); request_post fills in origin,
 * target_local and addr (t, offset bytes in) and the token. An update
 * whose payload is copied may join the SEND at the tail of c's chain that
 * a deferred one opened (a pack: requests.c), taking no credit or
 * buffer of its own.
 */
struct request_desc {
    struct ds_message msg;
    const struct target *t;
    size_t offset;
    bool verbatim; /* msg goes as given but for its token (tests of the server's checks) */
    /* The payload after the header: `payload` bytes written by fill(to, fill_ctx) (pulled by
     * the server from the request's buffer past request_room), or the ngather pieces of
     * registered memory in gather (at most the QP's max_sge - 1), sent in place by the SEND,
     * nothing copied, or one registered run at pull_from (key pull_rkey) the server pulls in
     * place, msg.len bytes. Memory in place is the request's until its SEND completes, or
     * pulled until its answer. */
    size_t payload;
    void (*fill)(void *to, const void *fill_ctx);
    const void *fill_ctx;
    const struct ibv_sge *gather;
    int ngather;
    const void *pull_from;
    uint32_t pull_rkey;
    bool reply_to_bounce; /* the server writes reply data into a bounce buffer (work's data) */
    void (*on_done)(struct work *f); /* then: runs on the work's completion, with ctx */
    void *ctx;
    /* A non-blocking caller's update: its SEND may wait in c's chain for more updates to join
     * it (one SEND, one credit: wire/protocol.h) until the caller waits, the next
     * progress call, or another post on c. */
    bool defer;
    struct handle *req;  /* counts the work until its reply */
    struct handle *sent; /* in place: counts it until the SEND completes (may be NULL) */
    int64_t *result;     /* where the reply's value goes */
    int32_t *status;     /* where the reply's status goes; NULL: a rejection is fatal */
    bool unfenced;       /* a lock request: no fence waits for its grant */
    const char *what;    /* for error messages */
};
struct work *request_post(struct conn *c, const struct request_desc *r);

/* Room for payload behind the header in one SEND to the data server (a SEND fills one
 * small buffer on our side, one receive buffer on the server's). */
static inline size_t request_room(void)
{
    return small_buffer_size() - sizeof(struct ds_message);
}

/* Payload one update carries: past request_room it stays in the request's bounce buffer and
 * the server pulls it (DS_PULLED), at most a bounce buffer's (and a server out buffer's). */
static inline size_t request_piece_room(void)
{
    return MAX(cfg.bounce_size - sizeof(struct ds_message), request_room());
}

#endif
