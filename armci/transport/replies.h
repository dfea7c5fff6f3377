/*
 * Replies from the data servers: each answers the messages its token names
 * (work.h). Owns the reply buffers (the SRQ of every client QP, one buffer
 * per reply that may be outstanding) and so the count of messages that may
 * still be sent.
 */
#ifndef ARMCI_TRANSPORT_REPLIES_H
#define ARMCI_TRANSPORT_REPLIES_H

#include <infiniband/verbs.h>
#include <stdbool.h>

/* Replies that can be outstanding over all connections (one receive buffer each). */
#define REPLY_BUFS 256

struct endpoint;

/* Posts the reply buffers, their completions handled on cq. */
void replies_init(struct endpoint *cq);
void replies_fini(void);
/* The shared receive queue every client QP takes its replies from. */
struct ibv_srq *replies_srq(void);

/* Takes a reply slot for a message (false: none free now). */
bool reply_slot_take(void);
/*
 * For a lock request, besides its message's slot: the second reply slot it
 * needs (a waiting lock is answered twice: dataserver/protocol.h), while
 * few enough lock requests of this process wait already (false: not now).
 * A waiting lock holds a reply slot until its grant: the bound keeps most
 * slots for the holders' unlocks and the rest of the traffic. Undone by
 * lock_granted.
 */
bool lock_request_take(void);
void lock_granted(void);

#endif
