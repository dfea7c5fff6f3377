#include "core/threads.h"

#include <pthread.h>
#include <string.h>

#include "core/error.h"

bool rt_threaded;

static pthread_mutex_t runtime_lock = PTHREAD_MUTEX_INITIALIZER;
/* How many times the calling thread holds the lock (0: not at all). */
static __thread unsigned depth __attribute__((tls_model("initial-exec")));

void threads_init(bool multiple)
{
    rt_threaded = multiple;
}

void threads_fini(void)
{
    rt_threaded = false;
}

void rt_lock_slow(void)
{
    if (depth++ > 0)
        return;
    int rc = pthread_mutex_lock(&runtime_lock);
    if (rc)
        armci_die(NULL, "pthread_mutex_lock (runtime lock) failed: %s", strerror(rc));
}

void rt_unlock_slow(void)
{
    if (--depth > 0)
        return;
    pthread_mutex_unlock(&runtime_lock);
}

unsigned rt_lock_suspend(void)
{
    unsigned held = depth;
    if (held == 0)
        return 0;
    depth = 0;
    pthread_mutex_unlock(&runtime_lock);
    return held;
}

void rt_lock_resume(unsigned held)
{
    if (held == 0)
        return;
    int rc = pthread_mutex_lock(&runtime_lock);
    if (rc)
        armci_die(NULL, "pthread_mutex_lock (runtime lock) failed: %s", strerror(rc));
    depth = held;
}
