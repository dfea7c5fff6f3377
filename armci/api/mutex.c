#include "api/mutex.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "armci.h"
#include "core/error.h"
#include "api/profiling.h"
#include "transport/progress.h"
#include "transport/remote.h"
#include "core/runtime.h"
#include "core/wait_policy.h"
#include "api/segment.h"
#include "dataserver/link.h"

/* Each process's mutexes are its block of one segment: the block index knows where each
 * process's array is and how many it created (its size), so nothing is kept per process. */
static uint64_t lock_seg;
static void *my_locks;
static int my_count = -1; /* -1: no mutexes exist */

static uint64_t load_serving(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Waits for our turn: spin briefly (wait_spins_first), then yield, then sleep, so waiters
 * never hog a core. */
static void ticket_lock_acquire(struct ticket_lock *lock)
{
    uint64_t ticket = __atomic_fetch_add(&lock->next, 1, __ATOMIC_ACQ_REL);
    for (unsigned spins = 0; load_serving(&lock->serving) != ticket; spins++) {
        if (wait_spins_first(spins, 256)) {
            cpu_relax();
        } else if (spins < 512) {
            sched_yield();
        } else {
            /* The holder may be remote: keep our own operations moving meanwhile. */
            progress_poll();
            struct timespec nap = {0, 20000};
            nanosleep(&nap, NULL);
        }
    }
    __atomic_store_n(&lock->holder, rt.me + 1, __ATOMIC_RELAXED);
}

static void ticket_lock_release(struct ticket_lock *lock, int mutex, int proc)
{
    int64_t holder = __atomic_load_n(&lock->holder, __ATOMIC_RELAXED);
    if (holder != rt.me + 1)
        armci_die("ARMCI_Unlock",
                  "mutex %d of process %d is not held by this process (%s): unlocking it "
                  "would corrupt it",
                  mutex, proc, holder ? "another process holds it" : "it is free");
    __atomic_store_n(&lock->holder, 0, __ATOMIC_RELAXED);
    /* Sequentially consistent: the Dekker pair with the data server (ticket_lock.h). */
    __atomic_fetch_add(&lock->serving, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&lock->remote_waiters, __ATOMIC_SEQ_CST))
        server_link_notify_unlock();
}

int PARMCI_Create_mutexes(int count)
{
    static const char call[] = "ARMCI_Create_mutexes";
    rt_require_init(call);
    check_nonneg(call, "count", count);
    if (my_count >= 0)
        armci_die(call, "mutexes already exist: call ARMCI_Destroy_mutexes first");

    void **blocks = xmalloc(sizeof(void *) * (size_t)rt.nprocs);
    /* Fresh shared memory is zeroed: every lock starts free (next == serving == 0). */
    seg_malloc_locks(call, blocks, (armci_size_t)count * (armci_size_t)sizeof(struct ticket_lock),
                     &rt.world_group, &lock_seg);
    my_locks = blocks[rt.me];
    free(blocks);
    my_count = count;
    return 0;
}
PROFILED(Create_mutexes)

int PARMCI_Destroy_mutexes(void)
{
    static const char call[] = "ARMCI_Destroy_mutexes";
    rt_require_init(call);
    if (my_count < 0)
        armci_die(call, "no mutexes exist: ARMCI_Create_mutexes was not called");
    seg_free(call, my_count ? my_locks : NULL, &rt.world_group);
    mutex_fini();
    return 0;
}
PROFILED(Destroy_mutexes)

void mutex_fini(void)
{
    my_locks = NULL;
    my_count = -1;
}

/* Mutex `mutex` of process proc, as addressed here. */
static struct ticket_lock *lock_of(const char *call, int mutex, int proc)
{
    rt_require_init(call);
    if (my_count < 0)
        armci_die(call, "no mutexes exist: call ARMCI_Create_mutexes first");
    check_proc(call, "proc", proc);
    void *locks = NULL;
    size_t bytes = 0;
    if (!seg_block(lock_seg, proc, &locks, &bytes))
        bytes = 0; /* it created none */
    int count = (int)(bytes / sizeof(struct ticket_lock));
    if (mutex < 0 || mutex >= count)
        armci_die(call, "argument mutex=%d is out of range: process %d created %d mutexes", mutex,
                  proc, count);
    return (struct ticket_lock *)locks + mutex;
}

static void resolve_lock(const char *call, int mutex, int proc, struct target *t)
{
    struct ticket_lock *lock = lock_of(call, mutex, proc);
    seg_resolve(call, "mutex", proc, lock, sizeof(*lock), t);
}

void PARMCI_Lock(int mutex, int proc)
{
    struct target t;
    resolve_lock("ARMCI_Lock", mutex, proc, &t);
    if (t.local)
        ticket_lock_acquire(t.local);
    else
        remote_lock(&t);
}
PROFILED(Lock)

void PARMCI_Unlock(int mutex, int proc)
{
    struct target t;
    resolve_lock("ARMCI_Unlock", mutex, proc, &t);
    if (t.local)
        ticket_lock_release(t.local, mutex, proc);
    else
        remote_unlock(&t);
}
PROFILED(Unlock)

long mutex_tickets_taken(int mutex, int proc)
{
    struct ticket_lock *lock = lock_of("mutex_tickets_taken", mutex, proc);
    return ARMCI_GetValueLong(&lock->next, proc);
}
