/*
 * The data server's send side: posting on a client's QP within the send
 * queue's and the send CQ's room, the completions of what was posted, and
 * the out buffers. A failed send breaks only its client's connection. Used
 * by the request handlers, the pulls and the replies.
 */
#ifndef ARMCI_DATASERVER_SENDS_H
#define ARMCI_DATASERVER_SENDS_H

#include <infiniband/verbs.h>
#include <stddef.h>

#include "dataserver/server_conn.h"
#include "verbs/buffer_pool.h"

/* Registers the send completion handlers on the server's send endpoint. */
void sends_init(void);
/* Accounts a completion of work posted on sc; a failed one breaks sc (the client replaces
 * its connection). For handlers of other tags on the send endpoint (pulls.c). */
void server_send_completed(struct server_conn *sc, const struct ibv_wc *wc);
/* sc's end is in error, known here before any completion says so (a test break point):
 * nothing more is sent on it, and its client is told to connect anew. */
void server_end_broke(struct server_conn *sc, const char *why);
/* Handles the send completions there are (never blocks). */
void server_drain_sends(void);
/* Sends posted and not yet completed, over all connections. */
int server_sends_in_flight(void);

/* Waits (draining send completions) for room to post `n` sends on sc. */
void server_reserve_sends(struct server_conn *sc, int n);
/*
 * Posts wr on sc's QP (room reserved). A refused post breaks the
 * connection; an out buffer it carried (wr_id tagged WR_TAG_OUTBUF) goes
 * back to the pool. An out buffer's owner must be sc: its completion is sc's.
 */
void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr);

/* An out buffer (waits for one to be free); its completion releases it, or
 * server_out_buf_put when nothing was posted from it (a pulled payload's). */
struct pool_buffer *server_out_buf_get(void);
/* While server_out_buf_get waits, it also calls fn: pulled payloads whose reads completed hold
 * out buffers until they are served (server.c). */
void sends_on_out_buf_wait(void (*fn)(void));
void server_out_buf_put(struct pool_buffer *o);
size_t server_out_buf_size(void);

#endif
