/*
 * The data server's credit policy (protocol.h: a client sends only while it
 * holds credits, each a request buffer of the shared receive queue). Every
 * connection gets an allowance, a fair share of the buffers; the credits
 * each reply returns move the allowances toward the fair share as clients
 * come and go. Only the connections that have sent a request count: the
 * buffers grow by an allowance at a connection's first request, not at its
 * setup, so that connections that never send one (the RDMA barrier's, puts
 * and gets by RDMA alone) register none. Their allowance, given at setup,
 * is the share they will have once they send; until the buffers have grown,
 * a first burst beyond what is posted waits on receiver-not-ready (infinite
 * retries: back-pressure, rc_qp.c).
 */
#ifndef ARMCI_DATASERVER_CREDITS_H
#define ARMCI_DATASERVER_CREDITS_H

#include "dataserver/server_conn.h"

/* A new connection: its first allowance (sc->allowance), its share once it sends. */
void credits_join(struct server_conn *sc);
/* Its first request came: it counts from now, and the buffers grow by its allowance. */
void credits_first_request(struct server_conn *sc);
/* A connection that replaces a broken one keeps the allowance the client was given, and
 * counts if the old one did. */
void credits_take_over(struct server_conn *sc, const struct server_conn *old);
/* A connection goes away: its allowance is free again. */
void credits_leave(const struct server_conn *sc);
/* Credits to return with a reply to sc (0, 1 or 2), adjusting its allowance. */
int credits_to_return(struct server_conn *sc);
void credits_fini(void);

#endif
