/*
 * The client progress engine: drives completions of this process's
 * in-flight operations (verbs completions, server replies, connection
 * setup). Single-node jobs have nothing in flight.
 */
#ifndef ARMCI_TRANSPORT_PROGRESS_H
#define ARMCI_TRANSPORT_PROGRESS_H

#include "transport/handle.h"

struct endpoint;

/* Creates the client CQ, with room for extra_cq_entries more completions (the UD data path's
 * receives); poll_hook runs after every poll (the connection queue posts what waited for
 * connections that became ready: it sits above the progress engine). */
void progress_init(void (*poll_hook)(void), int extra_cq_entries);
/* The UD data path (dgram.h): poll() runs at every poll (returns what it handled), and
 * next_deadline() (seconds from now, < 0: none) bounds every sleep. */
void progress_add_datagrams(int (*poll)(void), double (*next_deadline)(void));
void progress_fini(void);
/* The CQ every client QP completes on (for the connection manager). */
struct endpoint *progress_cq(void);

/* Handles whatever has completed, without blocking. */
void progress_poll(void);

/* Like progress_poll, but when nothing is ready it may block briefly (no busy spin). */
void progress_wait(void);

/* Makes progress until r has nothing pending (any thread's completions count; the
 * runtime lock is let go while waiting). */
void handle_wait(struct handle *r);

#endif
