/*
 * What the transport keeps about one connection: its queues, counters and
 * the state of its send queue. The connection manager's struct conn (odcm/conn.h) points
 * at it (c->io) and never reads it: it asks the transport through the
 * callbacks of struct cm_client_env whether a connection is busy.
 */
#ifndef ARMCI_TRANSPORT_CONN_IO_H
#define ARMCI_TRANSPORT_CONN_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pending_op;
struct work;
struct sq_retire;
struct sq_chain;
struct pool_buffer;
struct ds_message;
struct logged_wr;
struct send_rec;

struct conn_io {
    int outstanding; /* operations not yet complete at the target (fence waits for 0) */
    int pinned;      /* threads issuing on it right now: it must not be closed under them */
    int lock_waits;  /* threads waiting on it for a lock grant (may wait for our own unlock) */
    int credits;     /* data-server requests that may still be sent: the server's terms when the
                      * connection became ready (c->server_credits), given back with answers */

    /* Operations issued while connecting (entry.c). */
    struct pending_op *queue_head; /* FIFO */
    struct pending_op *queue_tail;
    int queued;    /* operations in that queue (at most ARMCI_SEND_WQES) */
    bool draining; /* the queue is being posted (by some thread) */

    /* Fences and ordering: the works in flight (work.c), what remote_fence waits for (remote.c). */
    uint64_t issued;     /* fence-covered operations started so far: their seq */
    struct work *oldest; /* those not complete yet, oldest first (fences wait here) */
    struct work *newest;
    uint64_t updates_sent; /* messages that make the data server write target memory */
    uint64_t updates_done; /* ... answered: in order, a server serves a connection in order */

    /* Its send queue (send_queue.h). */
    int sq_posted;          /* requests posted and not yet retired */
    int sq_unsignaled;      /* requests posted since the last signaled one */
    int sq_lazy_pending;    /* lazy works since the last signaled request */
    struct work *lazy_head; /* works waiting for a later signal, oldest first */
    struct work *lazy_tail;
    struct sq_retire *sq_ring; /* per signaled request in flight: what it retires */
    int sq_ring_head;
    int sq_ring_count;
    struct work *awaiting_head; /* in-order data-server messages awaiting answers (work.c) */
    struct work *awaiting_tail;
    uint64_t flush_addr; /* where a flush may write */
    uint32_t flush_rkey;
    bool sq_dirty;          /* lazy works wait for a flush, or the chain for its post */
    struct sq_chain *chain; /* requests prepared, not posted yet (send_queue.c) */
    /* The open pack: a data-server SEND at the chain's tail that more updates may join until
     * the chain is posted or something else follows it (requests.c). */
    struct pool_buffer *pack;     /* its buffer; NULL: no pack open */
    struct send_rec *pack_rec;    /* its record (replay_log.h), or NULL */
    struct ds_message *pack_last; /* its last request so far */
    size_t pack_next;             /* where a request joining it would start (8-byte aligned) */

    /* Requests not confirmed, to replay on a new QP if this one breaks (replay_log.h). */
    int posting; /* request_post is under way here: the node's UD path stays idle meanwhile */
    struct logged_wr *log; /* [log_cap] ring: requests posted and not retired, oldest first */
    int log_cap;           /* grows with what is in flight, up to sq_depth (replay_log.c) */
    int log_head;
    int log_count;
    struct send_rec *unanswered_head; /* SENDs retired with requests not answered yet */
    struct send_rec *unanswered_tail;
    /* Recovery (recovery.h): while its QP is replaced, what is posted is only logged. */
    bool recovering;
    double broke_at;
    const char *broke_why;
    struct work *replay_marker; /* the wr_id of SENDs sent again, outside the accounting */
    bool has_replayed;          /* requests were sent again on it (a lock told twice it waits) */
    int breaks_in_a_row;        /* recoveries with no request completed since (a poisoned one) */

    /* Liveness (liveness.h). */
    bool probing;     /* a liveness probe is in flight */
    double probed_at; /* when the last one was posted */
};

#endif
