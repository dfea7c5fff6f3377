/*
 * Pulls: RDMA reads of a client's data that the data server does not wait
 * for. A put the client left in place (DS_PUT_PULL) is read straight into
 * the target; a pulled payload (DS_PULLED) into an out buffer, then served
 * from there. While a connection's pull is in flight, what else arrives on
 * it waits here, in order, and the server serves its other clients: a read
 * from a client whose end broke can take the device's whole retry time,
 * which must stall that client alone. The loop (server.c) serves each
 * completed pull (handlers.h serve_pulled), then what waited behind it.
 */
#ifndef ARMCI_DATASERVER_PULLS_H
#define ARMCI_DATASERVER_PULLS_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>

#include "wire/protocol.h"
#include "dataserver/server_conn.h"
#include "verbs/buffer_pool.h"

struct pull {
    struct server_conn *sc;
    struct ds_message rq;    /* the request, served when its data is here */
    struct pool_buffer *out; /* DS_PULLED: where the payload lands; NULL: read into place */
    size_t payload;
    int status; /* the read's completion status (enum ibv_wc_status) */
    struct pull *next_done;
};

/* Registers the reads' completion handler on the server's send endpoint. */
void pulls_init(void);

/*
 * Posts the read of the n registered pieces `into` from the client's
 * rq->reply_addr/reply_rkey, for rq (copied). 0; EPIPE when sc is broken
 * (nothing posted). Until it is served, sc's next messages wait
 * (pull_holds).
 */
int pull_start(struct server_conn *sc, const struct ds_message *rq, const struct ibv_sge *into,
               int n, struct pool_buffer *out, size_t payload);
/* Reads posted whose pulls are not served yet (the loop then wakes on their completions). */
int pulls_in_flight(void);
/* The next pull whose read completed, oldest first, taken off its connection (NULL if
 * none); the caller serves it and frees it with pull_free. */
struct pull *pull_next_done(void);
void pull_free(struct pull *p);

/* sc's pull was served: its waiting messages, if any, are to be served (pull_next_resumed). */
void pull_resume(struct server_conn *sc);
/* A connection whose pull was served and whose messages wait, oldest first; NULL if none. */
struct server_conn *pull_next_resumed(void);

/* Whether what arrives on sc must wait: a pull of sc is in flight, or messages wait. */
bool pull_holds(const struct server_conn *sc);
/* Keeps a copy of a message received on sc (len bytes) until pull_unpark gives it back. */
void pull_park(struct server_conn *sc, const void *msg, size_t len);
/* sc's oldest waiting message in *msg (the caller frees it) and its length; false if none. */
bool pull_unpark(struct server_conn *sc, void **msg, size_t *len);

/*
 * sc is retired (its QP's work flushed): its pull and the messages that
 * waited are dropped unserved, their numbers unused, for the client's
 * replay on its next connection (DESIGN.md 10.1, rule 4); it leaves the
 * list of connections to resume.
 */
void pulls_forget_conn(struct server_conn *sc);

#endif
