/*
 * The layout of an ARMCI mutex in ARMCI memory: a FIFO ticket lock. Shared
 * by the API (same-node lockers), the data server (lockers on other nodes)
 * and the transport (message sizes). See api/mutex.c.
 */
#ifndef ARMCI_CORE_TICKET_LOCK_H
#define ARMCI_CORE_TICKET_LOCK_H

#include <stdint.h>

#include "core/util.h"

/*
 * Memory model: `next` and `serving` are the ticket lock (acquire on taking,
 * release on passing it on). `serving` and `remote_waiters` form a Dekker
 * pair between a same-node unlocker (serving++, then read remote_waiters)
 * and the data server queueing a remote locker (remote_waiters++, then read
 * serving): both sides use sequentially consistent operations so that at
 * least one sees the other. `holder` (rank + 1, 0 when free) is written only
 * by whoever holds the lock, so unlocks by anyone else are detected.
 */
struct ticket_lock {
    uint64_t next;
    uint64_t serving;
    uint64_t remote_waiters;
    int64_t holder;
} __attribute__((aligned(CACHE_LINE)));

#endif
