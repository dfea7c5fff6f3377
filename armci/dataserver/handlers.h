/* Executes clients' requests, each checked against the registry first (handlers.c). */
#ifndef ARMCI_DATASERVER_HANDLERS_H
#define ARMCI_DATASERVER_HANDLERS_H

#include <stddef.h>

#include "wire/protocol.h"
#include "dataserver/server_conn.h"

/* Executes one request received from sc (`bytes` long) and answers it. */
void serve_message(struct server_conn *sc, struct ds_message *rq, size_t bytes);

/*
 * Requests that need no connection (the UD data path reuses them): an
 * accumulate of rq->len bytes at `data` (payload bytes given), and an Rmw,
 * its old value in *old. Checked like every request; a ds_status.
 */
int serve_acc(const struct ds_message *rq, const void *data, size_t payload);
int serve_rmw(const struct ds_message *rq, int64_t *old);

#endif
