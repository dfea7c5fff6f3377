/*
 * Recovery of a broken RC connection (ARMCI_RECOVERY_TIMEOUT). A completion
 * error that means the path or the QP broke (retry count exceeded, local QP
 * operation error, flushed requests; not a remote access error, which stays
 * a named bug) or a QP's fatal event does not end the job: nothing more is
 * posted on the broken QP (what is issued meanwhile is logged, or queued
 * until the connection is back), the connection manager sets up a new QP
 * pair with a new attempt number over UD (its server replaces its end,
 * keeping the client's sequence space: dataserver/engine.h), and what the server
 * had not confirmed is posted again, in its original order, before anything
 * newer (replay_log.h). The server recognises replayed requests by their
 * numbers and applies nothing twice. A node whose server answers nothing
 * for ARMCI_RECOVERY_TIMEOUT is lost: the job ends naming it.
 */
#ifndef ARMCI_TRANSPORT_RECOVERY_H
#define ARMCI_TRANSPORT_RECOVERY_H

#include <infiniband/verbs.h>
#include <stdbool.h>

struct conn;
struct work;

/* `check_async_events` looks at the device's events (the progress engine's: an access error
 * ends the job naming it) before a connection is set up anew. */
void recovery_init(void (*check_async_events)(void));
/* Whether a failed request's status means c broke in a way recovery mends. */
bool recovery_mends(enum ibv_wc_status status);
/* c's QP broke (`why`, `what` failed): starts its recovery. False if recovery is off (the
 * caller ends the job as before). */
bool recovery_start(struct conn *c, const char *why, const char *what);
/* c's new QP is ready (its server's terms in c): posts again what was not confirmed, then c
 * is ready for new requests. */
void recovery_replay(struct conn *c);
/* A completion of a SEND posted again (its wr_id names `marker`). */
void recovery_marker_done(struct conn *c, const struct ibv_wc *wc);
/* c goes away. */
void recovery_forget(struct conn *c);

#endif
