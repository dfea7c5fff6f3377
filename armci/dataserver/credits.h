/*
 * The data server's credit policy (protocol.h: a client sends only while it
 * holds credits, each a request buffer of the shared receive queue). Every
 * connection gets an allowance, a fair share of the buffers; the credits
 * each reply returns move the allowances toward the fair share as clients
 * come and go.
 */
#ifndef ARMCI_DATASERVER_CREDITS_H
#define ARMCI_DATASERVER_CREDITS_H

#include "dataserver/server_conn.h"

/* A new connection: its first allowance (sc->allowance), a fair share of what is left. */
void credits_join(struct server_conn *sc);
/* A connection that replaces a broken one keeps the allowance the client was given. */
void credits_set(struct server_conn *sc, int allowance);
/* A connection goes away: its allowance is free again. */
void credits_leave(const struct server_conn *sc);
/* Credits to return with a reply to sc (0, 1 or 2), adjusting its allowance. */
int credits_to_return(struct server_conn *sc);
void credits_fini(void);

#endif
