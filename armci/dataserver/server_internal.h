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
    struct qp_pool *pool; /* on-demand mode: QPs made ahead for first contacts */
    uint64_t served;      /* requests served so far: the clock of last_served */
    int nconns;
    int allowance_total;
    pthread_t thread;
    bool running;
    bool stop;
};

extern struct server srv;

/*
 * Answers a request of sc's in-order stream (every request but a lock's),
 * returning flow-control credits. With `may_wait` (an update that succeeded)
 * the answer may go later, in one reply with the ones after it; otherwise it
 * goes now, together with every answer waiting before it.
 */
void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value,
                   bool may_wait);
/* Answers a lock request (granted now or later, or refused) on its own; `queued`: it waited in a
 * lock's queue and its credit went back with server_lock_queued then. */
void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued);
/* Tells the client its lock request waits in a queue, and returns the request's credit. */
void server_lock_queued(struct server_conn *sc, uint64_t token);
/* Sends every answer that waits (the server is about to idle). */
void server_answers_flush(void);
/*
 * RDMA-reads from the client of sc (raddr/rkey, contiguous) into the n
 * registered pieces `into`, and waits until the data is there: the
 * connection's next request may touch the same memory. 0, or an errno
 * value when the client's memory could not be read (its connection fails).
 */
int server_pull(struct server_conn *sc, const struct ibv_sge *into, int n, uint64_t raddr,
                uint32_t rkey);
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
enum registry_kind {
    REGISTRY_DATA,  /* ARMCI_Malloc memory */
    REGISTRY_LOCKS, /* ARMCI_Create_mutexes: an array of struct ticket_lock */
    REGISTRY_KIND_MAX
};
bool registry_contains(uint64_t addr, uint64_t len);
/* The same, and the local key of the registration holding the range. */
bool registry_lkey(uint64_t addr, uint64_t len, uint32_t *lkey);
/* Whether addr is the start of a mutex in a lock block. */
bool registry_is_lock(uint64_t addr);
/* Map and unmap for node-local process `local`; 0 or an errno value. Only the process
 * that mapped a segment may unmap it. */
int registry_map(uint64_t seg_id, const char *name, size_t size, enum registry_kind kind, int local,
                 uint64_t *base, uint32_t *rkey);
int registry_unmap(uint64_t seg_id, int local);
void registry_fini(void);

/* locks.c: ticket locks held on behalf of remote clients. */
void lock_request(struct server_conn *sc, const struct ds_message *rq);
void unlock_request(struct server_conn *sc, const struct ds_message *rq);
void locks_rescan(void);
/* A lock block is going away: its waiters get an error instead of a dangling lock. */
void locks_forget_range(uint64_t base, uint64_t size);
/* A connection goes away: its waiters with it (a client closes only when none is left). */
void locks_forget_conn(const struct server_conn *sc);
void locks_fini(void);

/* link.c: requests from processes of this node over a local socket. */
void link_listen(void);
void link_close(void);
/* The link's descriptors to poll (all of them; valid until the next link_handle). */
struct pollfd *link_pollfds(int *n);
/* Handles readiness on the descriptors link_pollfds added. */
void link_handle(const struct pollfd *fds, int n);

#endif
