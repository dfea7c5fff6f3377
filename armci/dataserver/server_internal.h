/* State and helpers shared by the data server's modules (server thread only). */
#ifndef ARMCI_DATASERVER_INTERNAL_H
#define ARMCI_DATASERVER_INTERNAL_H

#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/intmap.h"
#include "verbs/endpoint.h"
#include "core/wr_id.h"
#include "dataserver/protocol.h"
#include "dataserver/server.h"

/* Registered buffer a packed get is gathered into before the RDMA write back. */
struct out_buf {
    void *buf;
    uint32_t lkey;
    struct server_conn *sc;
    struct out_buf *next;
};

struct server {
    struct endpoint requests; /* receive CQ with a channel to sleep on: requests and UD */
    struct endpoint sends;    /* send CQ, drained without blocking: replies, RDMA, UD */
    struct recv_pool bufs;    /* the SRQ of every server QP: request header + payload each */
    int send_budget;
    int sends_posted;
    char *out_region;
    struct net_mr *out_mr;
    struct out_buf *out_all;
    struct out_buf *out_free;
    struct intmap by_qpn;
    int nconns;
    int allowance_total;
    pthread_t thread;
    bool running;
    bool stop;
};

extern struct server srv;

/* Answers a request; returns flow-control credits with it. */
void server_reply(struct server_conn *sc, uint64_t token, int status, int64_t value);
/* Waits (draining send completions) for room to post `n` sends on sc. */
void server_reserve_sends(struct server_conn *sc, int n);
struct out_buf *server_out_buf_get(void);
size_t server_out_buf_size(void);
void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr);

/* Ends the server loop once it has answered what it received (link.c, on STOP). */
void server_set_stop(void);

/* handlers.c: executes one request received from sc (`bytes` long). */
void serve_message(struct server_conn *sc, struct ds_message *rq, size_t bytes);

/* registry.c: the segments this server has mapped and registered. */
bool registry_contains(uint64_t addr, uint64_t len);
void registry_map(uint64_t seg_id, const char *name, size_t size, uint64_t *base, uint32_t *rkey);
void registry_unmap(uint64_t seg_id);
void registry_fini(void);

/* locks.c: ticket locks held on behalf of remote clients. */
void lock_request(struct server_conn *sc, const struct ds_message *rq);
void unlock_request(struct server_conn *sc, const struct ds_message *rq);
void locks_rescan(void);
void locks_fini(void);

/* link.c: requests from processes of this node over a local socket. */
void link_listen(void);
void link_close(void);
/* Adds the link's descriptors to a poll set; returns how many were added. */
int link_pollfds(struct pollfd *fds, int max);
/* Handles readiness on the descriptors link_pollfds added. */
void link_handle(const struct pollfd *fds, int n);

#endif
