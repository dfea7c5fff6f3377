/*
 * What a connection has sent and its data server has not confirmed, kept so
 * that it can be sent again, in order, on the QP that replaces a broken one
 * (recovery.h). Two parts, oldest first:
 *
 *  - send records: data-server SENDs the QP completed whose requests are not
 *    all answered yet. The device's completion means the bytes left, not that
 *    the server has them (DESIGN.md 10.1, rule 5): the whole SEND, payload
 *    included, goes again; the server serves it if it never got it, or
 *    answers it again if it did (dataserver/engine.h). A payload sent in
 *    place stays the request's until it is answered (server_path.c);
 *  - the log: every request posted and not retired yet (send_queue.h),
 *    verbatim: opcode, flags, wr_id, gather list, a copy of an inline
 *    payload. Replayed as it was, the send queue's accounting of signaled
 *    requests and lazy works holds on the new QP as it did on the old.
 *
 * A SEND's buffer belongs to its record: freed once the SEND is retired and
 * its last request answered. Kept only while recovery is on
 * (cfg.recovery_timeout > 0); otherwise a SEND's buffer is freed when it is
 * retired, as before.
 */
#ifndef ARMCI_TRANSPORT_REPLAY_LOG_H
#define ARMCI_TRANSPORT_REPLAY_LOG_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

struct conn;
struct work;
struct pool_buffer;

/* One data-server SEND (requests.c makes it; the first request's work points at it). */
struct send_rec {
    struct pool_buffer *bounce; /* its bytes: the requests, and payload copied behind them */
    uint32_t len;               /* bytes of it in the buffer (a payload sent in place is not) */
    struct ibv_sge *in_place;   /* the payload sent in place, gathered behind the buffer */
    int n_in_place;
    uint64_t first_seq;         /* its first request's number (struct ds_message.seq) */
    struct work *last;          /* its last request, answered last (NULL once answered) */
    bool retired;               /* its WR completed: the server has it */
    struct send_rec *next;      /* in its connection's unanswered records */
};

/* Whether records and the log are kept (recovery on). */
bool replay_log_on(void);

/* A record for a SEND in b whose first request is number `first_seq`, with the n pieces of
 * payload `in_place` gathered behind the buffer's bytes (copied: the caller's list may go). */
struct send_rec *send_rec_new(struct pool_buffer *b, uint64_t first_seq,
                              const struct ibv_sge *in_place, int n);
/* Request w is answered: if it is the last of its record's SEND, the record may go. */
void send_rec_answered(struct conn *c, struct work *w);

/* Logs the chain of requests `first` about to be posted (or held back) on c. */
void replay_log_append(struct conn *c, const struct ibv_send_wr *first);
/* The n oldest logged requests of c were retired by a completion. */
void replay_log_retire(struct conn *c, uint32_t n);
/* Whether a device atomic is among the logged requests of c (it cannot be replayed: it may
 * have been executed). */
bool replay_log_has_atomic(const struct conn *c);
/*
 * Posts on c's new QP what c's server has not confirmed: the unanswered
 * SENDs (signaled, as `marker`'s, outside the send queue's accounting),
 * then the log. The RDMA writes logged before the last SEND the server
 * had served (first request below `resume`) reached it already: they go as
 * empty writes (their completions still count), so that an RDMA write is
 * never applied again after the server has acted on what followed it.
 * Returns the requests posted again.
 */
int replay_log_post(struct conn *c, uint64_t resume, struct work *marker);
/* c goes away: its records and log too (their buffers freed). */
void replay_log_forget(struct conn *c);

#endif
