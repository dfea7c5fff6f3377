/*
 * ARMCI mutexes are FIFO ticket locks living in ARMCI memory of the
 * hosting process: a locker takes a ticket (fetch-and-add on `next`) and
 * holds the lock when `serving` reaches it. Same-node lockers use CPU
 * atomics; other nodes go through the host node's data server, which uses
 * the same atomics. A data server queues remote waiters and counts them in
 * `remote_waiters`, so a same-node unlock knows it must wake the server.
 */
#ifndef ARMCI_API_MUTEX_H
#define ARMCI_API_MUTEX_H

#include <stdint.h>

#include "core/ticket_lock.h"

void mutex_fini(void);

/* Tickets handed out so far for `mutex` at `proc` (tests observe queue order with it). */
long mutex_tickets_taken(int mutex, int proc);

#endif
