/*
 * A client's session with this data server: the numbering of its requests
 * (struct ds_message.seq), which outlives any one connection. A connection
 * that broke is replaced by a new one of the same session, and the client
 * replays every request it has no answer for; the session tells a replay
 * from a new request, so that nothing is applied twice, and keeps the
 * answers a replay must be given again rather than recomputed: Rmw results,
 * unlocks and refusals. (A replayed update needs no answer kept: it
 * succeeded, or its refusal is kept; a replayed get is read again; a lock's
 * state lives with the lock, locks.h.) A clean close (DISC) ends the
 * session; the client's next connection starts a new one from number 1.
 * Data server thread only.
 */
#ifndef ARMCI_DATASERVER_SESSIONS_H
#define ARMCI_DATASERVER_SESSIONS_H

#include <stdbool.h>
#include <stdint.h>

struct session;

/* The session of `client`, begun if it has none. */
struct session *session_of(int client);
/* The client closed its connection cleanly: its next one begins a new session. */
void session_end(int client);
void sessions_fini(void);

enum session_verdict {
    SESSION_NEW,    /* the next request: serve it (then session_served) */
    SESSION_REPLAY, /* served already: answer it again, apply nothing */
    SESSION_GAP,    /* beyond the next: requests before it never came (refused) */
};
enum session_verdict session_check(const struct session *s, uint64_t seq);
/* Request `seq` (SESSION_NEW) was served. */
void session_served(struct session *s, uint64_t seq);
/* Keeps the answer of request `seq` for a replay (Rmw, unlock, refusals). */
void session_keep(struct session *s, uint64_t seq, int status, int64_t value);
/* The kept answer of request `seq`: false if it was not kept (then it succeeded, for an update)
 * or is too old to be (more than DS_MAX_UNANSWERED answers ago). */
bool session_kept(const struct session *s, uint64_t seq, int *status, int64_t *value);
/* One more request recognised as a replay (the connection report). */
void session_count_replay(void);
/* One more request a failing connection left unserved, for the replay (the report). */
void session_count_unserved(void);
/* The session's next number: the client's requests below it were served (its new connection's
 * terms, so that it replays the RDMA after its last request the server saw, not before). */
uint64_t session_next(const struct session *s);

#endif
