/* Executes clients' requests, each checked against the registry first (handlers.c). */
#ifndef ARMCI_DATASERVER_HANDLERS_H
#define ARMCI_DATASERVER_HANDLERS_H

#include <stddef.h>

#include "dataserver/protocol.h"
#include "dataserver/server_conn.h"

/* Executes one request received from sc (`bytes` long) and answers it. */
void serve_message(struct server_conn *sc, struct ds_message *rq, size_t bytes);

#endif
