/*
 * Work in flight and the bounce buffers it holds: one posted verbs work
 * request, or a chain of them (and, for a data-server message, its reply). A work is counted in its
 * handle and in its connection until it completes, and fences wait for it. A message awaiting its
 * reply is named by a token: a slot index and that slot's generation, never an address, so a reply
 * with a token we did not hand out, an old one, or one arriving on another connection's QP is
 * dropped instead of being followed as a pointer.
 */
#ifndef ARMCI_TRANSPORT_WORK_H
#define ARMCI_TRANSPORT_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/util.h"
#include "transport/handle.h"
#include "verbs/buffer_pool.h"

struct conn;

/*
 * The client's bounce buffers: cfg.bounce_count registered buffers of
 * cfg.bounce_size bytes, for data copied on its way out (packed puts,
 * payloads the data server pulls) or on its way in (packed gets), which
 * peers may write and read. And its small buffers, as many of
 * small_buffer_size() bytes (a data server's request buffer): a request's
 * message and the payload it copies, a small put copied on its way out, an
 * atomic's old value. A job of small operations in flight then registers
 * 8 KiB for each instead of 64 KiB. bounce_wait and send_buffer_wait make
 * progress until one is free. Both pools start with a few buffers and
 * double when every one is taken.
 */

/* `wait` is how bounce_wait waits: the progress engine's progress_wait, which sits above
 * this file (completions give buffers back). */
void bounce_pool_init(void (*wait)(void));
/* A free bounce buffer: waits (making progress) for one. */
struct pool_buffer *bounce_wait(void);
/* A free buffer of at least `bytes` (at most cfg.bounce_size) for this process's device
 * alone: a small one when it fits one. Waits (making progress) for one. */
struct pool_buffer *send_buffer_wait(size_t bytes);
/* Bytes of a small buffer: a data server's request buffer, within a bounce buffer. */
static inline size_t small_buffer_size(void)
{
    return MIN(cfg.server_buf_size, cfg.bounce_size);
}
/* Where nothing is in flight (an all-fence): gives back the chunks of bounce and small buffers
 * the last second did not need (buffer_pool_trim). */
void bounce_pool_trim(void);
void bounce_pool_fini(void);

/* Gives a bounce or small buffer back to its pool. */
void buffer_free(struct pool_buffer *b);

enum work_kind { WORK_WRITE, WORK_READ, WORK_MESSAGE, WORK_REPLAY_MARKER };

struct work {
    enum work_kind kind;
    struct conn *conn;
    struct handle *req;         /* counted in here until complete (may be NULL) */
    struct pool_buffer *bounce; /* released on completion */
    int events_left;            /* WORK_MESSAGE: send completion + reply */
    int64_t *result;            /* WORK_MESSAGE: where the reply's value goes */
    int32_t *status; /* WORK_MESSAGE: where the reply's status goes; NULL: a rejection is fatal */
    struct pool_buffer *data;        /* packed get: the buffer the server writes the data into */
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
    struct send_rec *rec;            /* WORK_MESSAGE: its SEND's record (replay_log.h) */
    struct work *next_free;
};

/* A record of work towards c, counted in req (may be NULL) and covered by fences. */
struct work *work_new(enum work_kind kind, struct conn *c, struct handle *req);
/* Takes f out of what fences wait for (a lock request: its grant may wait for another
 * thread's unlock, and a fence must not wait for that). */
void work_not_fenced(struct work *f);
/* f is done: runs its on_done, frees its buffers, uncounts it and recycles it. */
void work_complete(struct work *f);
void works_fini(void);

/* Operations not yet complete over all connections (works, and queued operations). */
int works_outstanding(void);
/* An operation queued on c before it has works of its own: counted as outstanding on c
 * (fences and waits see it) and in req until works_unhold. */
void works_hold(struct conn *c, struct handle *req);
void works_unhold(struct conn *c, struct handle *req);

/* Message f awaits its reply: returns the token that names it (in_order: answered in
 * order on its connection, every message but a lock request). */
uint64_t work_await_reply(struct work *f, bool in_order);
/* The message a reply arriving on QP qp_num names, or NULL if the token is not a live one of
 * that connection. */
struct work *token_lookup(uint64_t token, uint32_t qp_num);
/* Whether `last` ends the n oldest in-order messages awaiting answers on its connection (what
 * a reply answering n requests up to `last` must find; struct ds_reply). */
bool tokens_match(const struct work *last, uint32_t n);
/* Takes the oldest in-order message of c awaiting its answer (its token becomes void). */
struct work *token_take_next(struct conn *c);
/* Takes lock request f, answered on its own (its token becomes void). */
struct work *token_take_lock(struct work *f);

#endif
