/*
 * Answers to clients' requests, each carrying credits back (credits.h).
 * Successful updates may be answered in batches: one reply answers several
 * requests of a connection's in-order stream (struct ds_reply's `answers`).
 */
#ifndef ARMCI_DATASERVER_ANSWERS_H
#define ARMCI_DATASERVER_ANSWERS_H

#include <stdbool.h>
#include <stdint.h>

#include "dataserver/server_conn.h"

/*
 * Answers a request of sc's in-order stream (every request but a lock's),
 * returning flow-control credits. With `may_wait` (an update that succeeded)
 * the answer may go later, in one reply with the ones after it; otherwise it
 * goes now, together with every answer waiting before it.
 */
void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value,
                   bool may_wait);
/* Answers a request another one follows in its SEND (protocol.h): like server_answer, but the
 * SEND's credit goes back with the last request's answer, and a success always waits for it. */
void server_answer_shared(struct server_conn *sc, uint64_t token, int status);
/* Answers a lock request (granted now or later, or refused) on its own; `queued`: it waited in a
 * lock's queue and its credit went back with server_lock_queued then. */
void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued);
/* Tells the client its lock request waits in a queue, and returns the request's credit. */
void server_lock_queued(struct server_conn *sc, uint64_t token);
/* Sends every answer that waits (the server is about to idle). */
void server_answers_flush(void);
/* sc goes away: answers waiting for it are dropped (nobody is left to read them). */
void answers_forget_conn(const struct server_conn *sc);
void answers_fini(void);

#endif
