/*
 * Detects two threads inside the transport at once. The runtime is not yet
 * safe for concurrent calls, so under MPI_THREAD_MULTIPLE overlapping calls
 * end the job with a message naming the thread level, instead of corrupting
 * the progress engine (which used to surface as a misleading connection
 * timeout). Without MPI_THREAD_MULTIPLE the check is one predictable branch.
 *
 * Every transport entry point brackets itself with enter/leave; nesting in
 * one thread (a put that waits for its completion) is allowed.
 */
#ifndef ARMCI_THREAD_CHECK_H
#define ARMCI_THREAD_CHECK_H

#include <stdbool.h>

extern bool thread_check_active; /* set once at init, when MULTIPLE was granted */

void thread_check_enter_slow(void);
void thread_check_leave_slow(void);

static inline void thread_check_enter(void)
{
    if (__builtin_expect(thread_check_active, 0))
        thread_check_enter_slow();
}

static inline void thread_check_leave(void)
{
    if (__builtin_expect(thread_check_active, 0))
        thread_check_leave_slow();
}

#endif
