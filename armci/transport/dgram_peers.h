/*
 * The client's state of the hybrid UD path per node it sends datagrams to
 * (dgram.h): the node's window of numbered requests, a ring of slots that
 * grows with what is in flight, each slot holding its request's data until
 * answered, and the count that earns the node an RC connection. Made at the
 * node's first datagram. Runs under the runtime lock, like dgram.c.
 */
#ifndef ARMCI_TRANSPORT_DGRAM_PEERS_H
#define ARMCI_TRANSPORT_DGRAM_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/handle.h"
#include "wire/dgram_protocol.h"

/* One request in a node's window: kept until answered, its data copied. */
struct dgram_slot {
    struct dgram_request rq;
    void *payload;      /* put, accumulate: rq.len bytes */
    void *dest;         /* get: where the data goes */
    int64_t *result;    /* Rmw: where the old value goes */
    struct handle *req; /* counts it until answered */
    const char *what;   /* for error messages */
    double sent_at;     /* last transmission */
    uint16_t sends;     /* transmissions so far (Karn: RTT samples from one-send requests only) */
    bool answered;
};

/* What a client keeps per node it sends datagrams to. */
struct dgram_peer {
    int node;
    uint32_t next_seq;        /* the number of the next request */
    uint32_t base;            /* the oldest unanswered (everything before it is answered) */
    uint32_t unsent;          /* the first not sent yet */
    uint32_t cap;             /* slots: grows up to the window */
    struct dgram_slot *slots; /* by number modulo cap */
    double srtt, rttvar, rto;
    double deadline;     /* when the unanswered ones are sent again; 0: none */
    double silent_since; /* its server's last datagram, the first send of what we wait for,
                            or our return from a time away (TIMER_AWAY_SECONDS): the silence
                            counts from the latest */
    long ops;            /* operations sent over UD since its last promotion */
    int promotions;      /* RC connections its UD traffic earned: each doubles the next price */
    int fenced;          /* unanswered requests: a fence waits for them */
    bool busy;           /* in the busy list */
};

/* Node's state, made at its first use; or NULL if it has none yet. */
struct dgram_peer *dgram_peer_of(int node);
struct dgram_peer *dgram_peer_find(int node);
/* Frees every node's state and the data its slots hold. */
void dgram_peers_fini(void);

static inline struct dgram_slot *dgram_slot_at(const struct dgram_peer *p, uint32_t seq)
{
    return &p->slots[seq % p->cap];
}

/* Room for one more slot: the ring doubles (4 at first, up to ARMCI_HYBRID_WINDOW). */
void dgram_slots_grow(struct dgram_peer *p);
/* An idle node's ring back to a few slots, so that memory follows the nodes in use, not the
 * deepest burst each node ever saw. */
void dgram_slots_shrink(struct dgram_peer *p);

/* A put's or accumulate's data, copied (the caller's buffer is free once the call returns),
 * and freed at its answer. */
void *dgram_payload_copy(const void *local, size_t len);
void dgram_payload_free(struct dgram_slot *sl);

/*
 * Counts one more operation to node over UD; whether it has earned the node an RC connection:
 * `price` operations since its last promotion, doubled for every promotion before (a node whose
 * connections keep being closed under a cap is promoted less and less often).
 */
bool dgram_count_op(int node, long price);
/* The node got its RC connection: the count starts again, at twice the price. */
void dgram_promoted(int node);

#endif
