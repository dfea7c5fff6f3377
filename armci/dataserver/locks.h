/* Ticket locks held on behalf of remote clients (data server thread only). */
#ifndef ARMCI_DATASERVER_LOCKS_H
#define ARMCI_DATASERVER_LOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/protocol.h"
#include "dataserver/server_conn.h"

/* A client's lock request over RC, answered at once (granted, queued or refused) and, when
 * queued, again when its turn comes; returns that first answer's status. */
int lock_request(struct server_conn *sc, const struct ds_message *rq);
/* An unlock over RC, answered; returns its status. */
int unlock_request(struct server_conn *sc, const struct ds_message *rq);
/* A lock request replayed after sc's client lost a connection (dataserver/engine.h): answered from the
 * state of that request (still queued: its grant now goes to sc; granted), never given a
 * second ticket. False if the request is neither queued nor granted (it was refused). */
bool lock_replayed(struct server_conn *sc, const struct ds_message *rq);
/* Connection `from` broke and `to` replaces it: its queued lock requests are answered on `to`. */
void locks_move_conn(const struct server_conn *from, struct server_conn *to);

/* A same-node unlock may have made a queued waiter's turn come. */
void locks_rescan(void);
/* A lock block is going away: its waiters get an error instead of a dangling lock. */
void locks_forget_range(uint64_t base, uint64_t size);
/* A connection goes away: its waiters with it (a client closes only when none is left). */
void locks_forget_conn(const struct server_conn *sc);
void locks_fini(void);

#endif
