/*
 * The data server's send side: posting on a client's QP within the send
 * queue's and the send CQ's room, the completions of what was posted, the
 * out buffers, and RDMA reads of client data. A failed send breaks only its
 * client's connection. Used by the request handlers and the replies.
 */
#ifndef ARMCI_DATASERVER_SENDS_H
#define ARMCI_DATASERVER_SENDS_H

#include <infiniband/verbs.h>
#include <stddef.h>

#include "dataserver/server_conn.h"
#include "verbs/buffer_pool.h"

/* Registers the send completion handlers on the server's send endpoint. */
void sends_init(void);
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

/* An out buffer (waits for one to be free); its completion releases it. */
struct pool_buffer *server_out_buf_get(void);
size_t server_out_buf_size(void);

/*
 * RDMA-reads from the client of sc (raddr/rkey, contiguous) into the n
 * registered pieces `into`, and waits until the data is there: the
 * connection's next request may touch the same memory. 0; EFAULT when the
 * client's memory refused the read (its address or key); EPIPE when the
 * connection failed (broken before or under the read: the request is for
 * the replay on the client's next connection).
 */
int server_pull(struct server_conn *sc, const struct ibv_sge *into, int n, uint64_t raddr,
                uint32_t rkey);

#endif
