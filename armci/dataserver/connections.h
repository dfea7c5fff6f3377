/*
 * The data server's connections: the connection manager creates, connects
 * and destroys them through the callbacks here (cm_server_ops), and the
 * loop finds a request's connection by the QP it arrived on.
 */
#ifndef ARMCI_DATASERVER_CONNECTIONS_H
#define ARMCI_DATASERVER_CONNECTIONS_H

#include <stdint.h>

#include "dataserver/server_conn.h"
#include "odcm/cm_server.h"

extern const struct cm_server_ops server_conn_ops;

/* The connection whose QP is qp_num, or NULL. */
struct server_conn *server_conn_of_qp(uint32_t qp_num);
/* Finalize: every connection left goes, without waiting for anything. */
void connections_fini(void);

#endif
