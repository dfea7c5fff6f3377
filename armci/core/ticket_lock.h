/*
 * The layout of an ARMCI mutex in ARMCI memory: a FIFO ticket lock. Shared
 * by the API (same-node lockers), the data server (lockers on other nodes)
 * and the transport (message sizes). See api/mutex.c.
 */
#ifndef ARMCI_TICKET_LOCK_H
#define ARMCI_TICKET_LOCK_H

#include <stdint.h>

#include "core/util.h"

struct ticket_lock {
    uint64_t next;
    uint64_t serving;
    uint64_t remote_waiters;
} __attribute__((aligned(CACHE_LINE)));

#endif
