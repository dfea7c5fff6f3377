/*
 * How a thread that waits for another uses its core (ARMCI_WAIT): a client
 * polling for a data server's answer, a data server lingering for the next
 * request, a barrier waiter. With a core for every thread of the job on this
 * host, polling with a pause instruction answers fastest. With more threads
 * than cores (4 ranks and 2 data servers on 2 cores), the thread waited for
 * may be the one that needs this core: between polls the waiter gives the
 * core away (sched_yield), so a server's answer or a client's next request
 * is not stuck behind a spinning neighbour.
 */
#ifndef ARMCI_CORE_WAIT_POLICY_H
#define ARMCI_CORE_WAIT_POLICY_H

#include <sched.h>
#include <stdbool.h>

#include "core/util.h"

extern bool wait_yields; /* set once by wait_policy_init, read by every waiter */
/* How long a waiter that may wait long (a barrier's) yields before it starts to nap. */
extern double wait_yield_seconds;

/* Collective over the job (called after topo_init): chooses the policy. */
void wait_policy_init(void);

/* Between two polls of a wait. */
static inline void wait_pause(void)
{
    if (wait_yields)
        sched_yield();
    else
        cpu_relax();
}

/* Whether a long waiter (barrier, mutex) still spins with a pause at its poll number `spins`
 * before it starts to yield: its first `limit` polls, unless cores are oversubscribed. There
 * the thread waited for may need this very core: 4 ranks on 2 cores took 13-17 us a one-node
 * barrier spinning first, 5-7 us yielding at once. */
static inline bool wait_spins_first(unsigned spins, unsigned limit)
{
    return !wait_yields && spins < limit;
}

#endif
