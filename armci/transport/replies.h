/*
 * Replies from the data servers: each answers the messages its token names
 * (work.h), and gives back their reply slots (send_queue.h) and the
 * credits it carries. Owns the reply buffers: the SRQ of every client QP,
 * one buffer per reply that may be outstanding.
 */
#ifndef ARMCI_TRANSPORT_REPLIES_H
#define ARMCI_TRANSPORT_REPLIES_H

#include <infiniband/verbs.h>

struct endpoint;

/* Posts the reply buffers, their completions handled on cq. */
void replies_init(struct endpoint *cq);
void replies_fini(void);
/* The shared receive queue every client QP takes its replies from. */
struct ibv_srq *replies_srq(void);

#endif
