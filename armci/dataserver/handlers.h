/* Executes clients' requests, each checked against the registry first (handlers.c). */
#ifndef ARMCI_DATASERVER_HANDLERS_H
#define ARMCI_DATASERVER_HANDLERS_H

#include <stddef.h>

#include "wire/protocol.h"
#include "dataserver/server_conn.h"
#include "verbs/buffer_pool.h"

/* Executes one request received from sc (`bytes` long) and answers it; a pull's once its
 * read completes (serve_pulled). */
void serve_message(struct server_conn *sc, struct ds_message *rq, size_t bytes);

/* Serves rq, whose read (pulls.h) completed with wc_status: from out (payload bytes) for a
 * pulled payload, or in place (out NULL); a broken read leaves it for the replay. */
void serve_pulled(struct server_conn *sc, struct ds_message *rq, struct pool_buffer *out,
                  size_t payload, int wc_status);

/*
 * Requests that need no connection (the UD data path reuses them): an
 * accumulate of rq->len bytes at `data` (payload bytes given), and an Rmw,
 * its old value in *old. Checked like every request; a ds_status.
 */
int serve_acc(const struct ds_message *rq, const void *data, size_t payload);
int serve_rmw(const struct ds_message *rq, int64_t *old);

#endif
