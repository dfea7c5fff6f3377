/*
 * The data server: one thread per node, in the node's master process. It
 * serves what RDMA cannot do for clients on other nodes (accumulate, Rmw,
 * locks, packed strided transfers), from a shared receive queue whose size
 * does not depend on the number of clients, and blocks on a completion
 * channel when idle (ARMCI_SERVER_POLL=1 makes it spin instead).
 */
#ifndef ARMCI_DATASERVER_SERVER_H
#define ARMCI_DATASERVER_SERVER_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "../verbs/device.h"

/* The server side of one client's connection. */
struct server_conn {
    int client; /* the client's rank */
    struct ibv_qp *qp;
    uint32_t psn;
    int allowance; /* requests the client may have outstanding here */
    int sq_posted;
    bool connected;      /* RTR/RTS done */
    uint32_t epoch;      /* on-demand: the client's connection attempt */
    uint64_t sends_done; /* statistics */
};

/* Master only, in this order at init; stop and fini at finalize. */
void server_init(void);
void server_start(void);
void server_stop(void);
void server_fini(void);

/* Creates the server end of a connection from `client` (QP in INIT). */
struct server_conn *server_conn_create(int client);
/* Moves it to RTS towards the client's QP. */
void server_conn_connect(struct server_conn *sc, const struct verbs_addr *client_addr);
struct server_conn *server_conn_of_client(int client);
struct verbs_addr server_conn_addr(const struct server_conn *sc);

/* Connections this server holds (for the report). */
int server_conn_count(void);

#endif
