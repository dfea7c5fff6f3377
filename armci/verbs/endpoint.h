/*
 * One verbs endpoint object for every user of the device: the client, the
 * data server and the UD connection channel.
 *
 * An endpoint is a completion queue (optionally with a completion channel
 * to sleep on) whose completions are dispatched by the tag in their wr_id
 * (wr_id.h) to the handler its owner registered for that tag. A receive
 * pool is a set of equal registered buffers posted to a shared receive
 * queue or to one QP's receive queue; the pool reposts a buffer after every
 * completion, failed ones included, so no error ever shrinks it.
 *
 * Every verbs failure names the verb and the endpoint; creation failures
 * end the job, teardown failures are reported and ignored.
 */
#ifndef ARMCI_VERBS_ENDPOINT_H
#define ARMCI_VERBS_ENDPOINT_H

#include <infiniband/verbs.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/memstat.h"
#include "core/wr_id.h"

struct endpoint;

/* Handles one completion carrying the tag it was registered for. */
typedef void (*completion_fn)(void *ctx, const struct ibv_wc *wc);

#define ENDPOINT_TAGS 8

struct endpoint {
    const char *who; /* names the endpoint in messages */
    struct ibv_comp_channel *channel;
    struct ibv_cq *cq;
    unsigned events_unacked;
    struct {
        completion_fn fn;
        void *ctx;
    } on[ENDPOINT_TAGS];
};

/* Creates the CQ (cqe entries), with a non-blocking completion channel if asked. */
void endpoint_create(struct endpoint *e, const char *who, int cqe, bool with_channel);
void endpoint_destroy(struct endpoint *e);

/* Completions with this wr_id tag go to fn(ctx, wc). */
void endpoint_on(struct endpoint *e, enum wr_tag tag, completion_fn fn, void *ctx);

/* Polls one batch and dispatches it; returns how many completions there were. */
int endpoint_poll(struct endpoint *e);

/*
 * Sleeps until a completion is signalled on the channel, a descriptor in
 * extra[0..nextra) is ready, or timeout_ms passes. Arms the CQ and polls
 * once more first (a completion may have slipped in): returns the number
 * of completions handled then, 0 after a sleep. extra[].revents is valid
 * only when this returns 0. A caller holding the runtime lock (threads.h)
 * lets it go for the sleep.
 */
int endpoint_wait(struct endpoint *e, int timeout_ms, struct pollfd *extra, int nextra);

/*
 * For another endpoint's wait: arms e's CQ (made with a channel) and gives
 * the pollfd its next completion makes ready; then endpoint_disarm with
 * what the poll saw. A completion that came before the arming is not
 * signalled: poll e once after arming.
 */
struct pollfd endpoint_arm(struct endpoint *e);
void endpoint_disarm(struct endpoint *e, const struct pollfd *seen);

/* Buffers [first, first + chunk) of a receive pool: registered together. */
struct recv_chunk {
    char *bufs;
    struct net_mr *mr;
};

struct recv_pool {
    const char *what;
    enum mem_kind kind; /* the report's kind of its buffers */
    size_t buf_size;
    int count;                 /* buffers registered and posted */
    int max;                   /* most it may grow to (recv_pool_grow) */
    int chunk;                 /* buffers per chunk: the count it was created with */
    struct recv_chunk *chunks; /* max / chunk, rounded up; the first count / chunk made */
    struct ibv_srq *srq;       /* posted here, or else to qp */
    struct ibv_qp *qp;
    enum wr_tag tag;
    completion_fn fn; /* the owner's handler for successful receives */
    void *ctx;
    /* Optional: told about every failed receive (flushes included); returns whether to
     * repost its buffer. Without it, all are reposted but flushes of a QP's own queue. */
    bool (*on_failure)(void *ctx, const struct ibv_wc *wc);
    uint32_t generation; /* of the buffers posted since the last recv_pool_reset */
    long failed;         /* receive completions with an error other than a flush */
};

/*
 * Buffers for an SRQ the pool creates (srq_pd != NULL: created on that PD)
 * or for a QP's own receive queue (recv_pool_attach_qp, before posting).
 * Completions tagged `tag` on endpoint e reach fn with a buffer that is
 * reposted as soon as fn returns: fn copies what it keeps. `count` buffers
 * now; up to `max` (rounded up to a whole chunk of count) by recv_pool_grow:
 * the SRQ, or the QP's receive queue, must have room for max.
 */
void recv_pool_create(struct recv_pool *p, const char *what, enum mem_kind kind, int count, int max,
                      size_t buf_size, struct ibv_pd *srq_pd, struct endpoint *e, enum wr_tag tag,
                      completion_fn fn, void *ctx);
/* Registers and posts chunks until the pool has at least `want` buffers (at most max). */
void recv_pool_grow(struct recv_pool *p, int want);
/* For a pool without SRQ: the QP whose receive queue the buffers go to; posts them all. */
void recv_pool_attach_qp(struct recv_pool *p, struct ibv_qp *qp);
/*
 * The pool's QP went through RESET (which discards posted receives): posts
 * every buffer again. Completions of buffers posted before, still in the CQ,
 * are then ignored: the CQ can hold up to twice the pool's count for it.
 */
void recv_pool_reset(struct recv_pool *p);
void recv_pool_destroy(struct recv_pool *p);

/* The buffer a receive completion refers to. */
void *recv_pool_buffer(const struct recv_pool *p, const struct ibv_wc *wc);

#endif
