/*
 * The client side of the inter-node data path (one per process): its
 * completion queue, the receive buffers for server replies, registered
 * bounce buffers, and the bookkeeping of operations in flight.
 *
 * Limits that keep every queue from overflowing:
 *   - per connection: at most sq_depth send WRs posted (ARMCI_SEND_WQES),
 *     and per process at most `send_budget` signaled ones in flight, so the
 *     shared CQ never overruns (send_queue.h);
 *   - per connection: at most `credits` data-server messages outstanding (the
 *     server returns credits with replies), and per process at most
 *     `reply_slots` (one posted reply buffer each).
 */
#ifndef ARMCI_TRANSPORT_CLIENT_H
#define ARMCI_TRANSPORT_CLIENT_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/conn_io.h"
#include "transport/handle.h"
#include "verbs/endpoint.h"
#include "verbs/rc_qp.h"

struct conn;

struct bounce {
    void *buf;
    uint32_t lkey;
    uint32_t rkey;
    struct bounce *next;
};

enum work_kind { WORK_WRITE, WORK_READ, WORK_MESSAGE };

/* Work in flight: one posted verbs work request (and, for a data-server message, its reply). */
struct work {
    enum work_kind kind;
    struct conn *conn;
    struct handle *req;    /* counted in here until complete (may be NULL) */
    struct bounce *bounce; /* released on completion */
    int events_left;       /* WORK_MESSAGE: send completion + reply */
    int64_t *result;       /* WORK_MESSAGE: where the reply's value goes */
    int32_t *status; /* WORK_MESSAGE: where the reply's status goes; NULL: a rejection is fatal */
    struct bounce *data;             /* packed get: the buffer the server writes the data into */
    void (*on_done)(struct work *f); /* packed get: unpacks `data` */
    void *ctx;                       /* for on_done */
    const char *what;                /* for error messages */
    bool server_update;              /* a message the server applies to target memory */
    bool fenced;                     /* linked in conn's in-flight list (fences wait for it) */
    uint64_t seq;                    /* its place in conn's issue order */
    struct work *older, *newer;      /* the in-flight list */
    struct work *lazy_next;          /* in conn's lazy works (send_queue.h) */
    struct handle *sent;             /* WORK_MESSAGE sent from user memory: counted until sent */
    uint64_t token;                  /* WORK_MESSAGE: names it in the reply */
    bool in_order;                   /* WORK_MESSAGE: answered in order (every one but a lock) */
    bool lock_queued;                /* lock request: told it waits in the mutex's queue */
    struct work *answer_next;        /* in conn's messages awaiting answers, oldest first */
    struct work *next_free;
};

struct client_ep {
    struct endpoint cq;       /* every client QP and the client's UD channel complete here */
    struct recv_pool replies; /* SRQ of all client QPs: one buffer per reply outstanding */
    int send_budget;          /* signaled send WRs that may be in flight over all QPs */
    int signaled;
    int outstanding;   /* operations not yet complete, over all connections */
    int reply_slots;   /* free reply buffers = messages that may still be sent */
    int lock_requests; /* lock requests not granted yet (each may hold a reply slot long) */
    void *bounce_region;
    struct net_mr *bounce_mr;
    struct bounce *bounce_all;
    struct bounce *free_bounces;
    int bounces_free;
};

extern struct client_ep ep;

void client_init(void);
void client_fini(void);

/* What the connection manager needs from the client (cm_init's argument). */
struct cm_client_env;
void client_cm_env(struct cm_client_env *env);

/* Bounce buffers (cfg.bounce_size bytes each); bounce_get waits for a free one. */
struct bounce *bounce_get(void);
void bounce_free(struct bounce *b);

/* A record of work towards c, counted in req (may be NULL) and covered by fences. */
struct work *work_new(enum work_kind kind, struct conn *c, struct handle *req);
/* Takes f out of what fences wait for (a lock request: its grant may wait for another
 * thread's unlock, and a fence must not wait for that). */
void work_not_fenced(struct work *f);
/* Completion bookkeeping of f (progress.c): counters, in-flight list, handle. */
void work_retire(struct work *f);

/* The message a reply arriving on QP qp_num names, or NULL if the token is not a live one of
 * that connection (message_send issues tokens). */
struct work *token_lookup(uint64_t token, uint32_t qp_num);
/* Whether `last` ends the n oldest in-order messages awaiting answers on its connection (what
 * a reply answering n requests up to `last` must find; struct ds_reply). */
bool answers_match(const struct work *last, uint32_t n);
/* Takes the oldest in-order message of c awaiting its answer (its token becomes void). */
struct work *answer_next(struct conn *c);
/* Takes lock request f, answered on its own (its token becomes void). */
struct work *answer_lock(struct work *f);

/*
 * A chain of RDMA work requests to one connection, posted with a single
 * ibv_post_send (one doorbell on hardware, one batch in softib). Add, then
 * flush; adding flushes by itself before it would have to wait.
 */
#define RDMA_BATCH_MAX 64
struct rdma_batch {
    struct conn *c;
    int n;
    struct ibv_send_wr wr[RDMA_BATCH_MAX];
    struct ibv_sge sge[RDMA_BATCH_MAX];
};

static inline void rdma_batch_init(struct rdma_batch *b)
{
    b->c = NULL;
    b->n = 0;
}

/*
 * One request of work w: `last` if it is w's last, `wanted` if w's
 * completion is awaited soon (otherwise w may complete lazily: send_queue.h).
 */
void rdma_batch_add(struct rdma_batch *b, struct conn *c, enum ibv_wr_opcode op, void *local,
                    uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, struct work *w,
                    bool last, bool wanted);
void rdma_batch_flush(struct rdma_batch *b);

/* A data-server message in b (len bytes), followed on the wire by the npayload pieces of
 * registered memory in payload (at most the QP's max_sge - 1); waits while a queue limit is
 * reached. */
void post_message(struct conn *c, struct bounce *b, size_t len, const struct ibv_sge *payload,
                  int npayload, struct work *inf);
/* Reserves a message credit on c (waits for one). */
void reserve_message(struct conn *c);
/*
 * Before a lock request's message_begin: reserves the second reply slot a lock request needs
 * (a waiting lock is answered twice: dataserver/protocol.h), and waits while too many lock
 * requests of this process wait already. A waiting lock holds a reply slot until its grant:
 * the bound keeps most slots for the holders' unlocks and the rest of the traffic. Undone by
 * lock_granted.
 */
void reserve_lock_request(void);
void lock_granted(void);

struct target;
struct ds_message;
/*
 * A data-server message about t (`offset` bytes in), built in a bounce
 * buffer; its payload goes right after it. message_send posts it.
 */
struct ds_message *message_begin(struct conn *c, int op, const struct target *t, size_t offset,
                                 uint64_t len, struct bounce **b);
void message_send(struct conn *c, struct ds_message *rq, struct bounce *b, size_t payload,
                  struct work *f, const char *what);
/* The same with the payload (`payload` bytes) taken in place from registered memory, the
 * nfrom pieces of `from`: the SEND gathers header and payload, nothing is copied here. */
void message_send_from(struct conn *c, struct ds_message *rq, struct bounce *b,
                       const struct ibv_sge *from, int nfrom, size_t payload, struct work *f,
                       const char *what);

/*
 * Waits until the data server of c's node has applied every update sent to
 * it so far. RDMA bypasses the server, so an RDMA read or write issued after
 * a packed put or an accumulate to the same memory would overtake it: ARMCI
 * orders one origin's operations to one target, and GA relies on it.
 */
void wait_server_updates(struct conn *c);

/* Waits until every fence-covered operation started on c before this call is complete at
 * the target (operations other threads start meanwhile are not waited for). */
void conn_fence(struct conn *c);

#endif
