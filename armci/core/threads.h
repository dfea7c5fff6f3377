/*
 * Thread safety under MPI_THREAD_MULTIPLE.
 *
 * When MPI grants MPI_THREAD_MULTIPLE, every ARMCI call may come from any
 * thread at any time. The runtime then serialises what it shares (the
 * transport and its progress engine, the connection manager, the handle
 * and segment tables) under one process-wide lock, the runtime lock. It is
 * recursive per thread (a put may wait for its own completion, which polls),
 * it is never held across an MPI call, and a thread that has to wait (for a
 * completion, a credit, a connection) lets it go while it sleeps or spins, so
 * the others can issue and complete operations meanwhile.
 *
 * Without MPI_THREAD_MULTIPLE, rt_lock and rt_unlock are one predictable
 * branch each and nothing else changes.
 */
#ifndef ARMCI_CORE_THREADS_H
#define ARMCI_CORE_THREADS_H

#include <stdbool.h>

/* Set once at init, before any other thread can call ARMCI. */
extern bool rt_threaded;

void threads_init(bool multiple);
void threads_fini(void);

void rt_lock_slow(void);
void rt_unlock_slow(void);

static inline void rt_lock(void)
{
    if (__builtin_expect(rt_threaded, 0))
        rt_lock_slow();
}

static inline void rt_unlock(void)
{
    if (__builtin_expect(rt_threaded, 0))
        rt_unlock_slow();
}

/*
 * For a thread about to wait: releases the runtime lock however deeply it
 * holds it, and returns the depth rt_lock_resume restores. Both are no-ops
 * for a thread that does not hold it (the data server) or when unthreaded.
 */
unsigned rt_lock_suspend(void);
void rt_lock_resume(unsigned depth);

#endif
