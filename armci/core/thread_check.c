#include "core/thread_check.h"

#include <stddef.h>

#include "core/error.h"
#include "core/runtime.h"

bool thread_check_active;

/* The owning thread is named by the address of its own depth counter. */
static const void *owner;
static __thread unsigned depth;

void thread_check_enter_slow(void)
{
    if (depth++ > 0)
        return;
    const void *expected = NULL;
    if (!__atomic_compare_exchange_n(&owner, &expected, &depth, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        armci_die("ARMCI (MPI_THREAD_MULTIPLE)",
                  "two threads of rank %d called ARMCI at the same time; MPI_THREAD_MULTIPLE "
                  "was granted, but this libarmci supports only MPI_THREAD_SERIALIZED use: "
                  "make one thread call ARMCI at a time (e.g. an OpenMP critical section)",
                  rt.me);
}

void thread_check_leave_slow(void)
{
    if (--depth == 0)
        __atomic_store_n(&owner, NULL, __ATOMIC_RELEASE);
}
