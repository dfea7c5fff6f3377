/*
 * How long the data server keeps polling its completion queue after work
 * before it sleeps on the completion channel (ARMCI_SERVER_SPIN_US). Right
 * after a request the next is likely on its way, and a sleeping server pays
 * a wake-up for it: for an 8 B put over the hybrid UD path that wake-up is
 * most of the operation. Polling on is wasted when nothing comes, so the
 * time adapts to the gaps the server sees between going idle and its next
 * request:
 *   - a request that comes while it polls: the time covers twice that gap;
 *   - one that comes after it fell asleep but within the bound: the time
 *     grows to twice that gap (polling longer would have caught it);
 *   - from the fourth longer idle period in a row on (none of them followed
 *     by a request caught while polling), the time halves, down to a floor;
 *     a client that pauses between short bursts keeps what its bursts need.
 * Bounded by ARMCI_SERVER_SPIN_US; with no spare core (ARMCI_WAIT yields,
 * core/wait_policy.h) by today's 50 us as well, and the polling there
 * yields the core between polls instead of spinning.
 * Pure bookkeeping over the times it is given: the loop (server.c) polls.
 */
#ifndef ARMCI_DATASERVER_LINGER_H
#define ARMCI_DATASERVER_LINGER_H

#include <stdbool.h>

struct linger {
    double bound;      /* seconds: the longest it polls after work */
    double floor;      /* seconds: the shortest, after long idle periods */
    double current;    /* seconds it polls after the next piece of work */
    double idle_since; /* when it last found nothing to do; < 0 while busy */
    bool slept;        /* whether it gave up polling in this idle period */
    int long_idles;    /* idle periods longer than the bound in a row */
};

/* With no spare core the bound is at most this (the fixed linger before it adapted). */
#define LINGER_YIELD_BOUND 50e-6

/* bound_seconds: ARMCI_SERVER_SPIN_US; yields: ARMCI_WAIT's choice for this host. */
void linger_init(struct linger *l, double bound_seconds, bool yields);

/* The server found work at time `now`: the idle period that ends here teaches the time. */
void linger_work(struct linger *l, double now);

/* The server has nothing to do at `now`: whether it polls on (true) or may sleep. */
bool linger_poll_on(struct linger *l, double now);

#endif
