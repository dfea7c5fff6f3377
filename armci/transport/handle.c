/* The implicit handles of the process and its threads (handle.h). */
#include "transport/handle.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/threads.h"
#include "core/util.h"

/*
 * The implicit handle: one per process, or one per thread under
 * MPI_THREAD_MULTIPLE (WaitAll waits for the calling thread's implicit
 * operations). A thread's handle may still count operations when the
 * thread ends: it then stays on the list, to be freed at finalize, and
 * only an idle one is recycled for a new thread.
 */
static struct handle process_implicit = {.in_use = true};

struct thread_handle {
    struct handle h;
    struct thread_handle *next;
};

static __thread struct thread_handle *mine __attribute__((tls_model("initial-exec")));
static struct thread_handle *all; /* every thread handle (runtime lock) */
static pthread_key_t exit_key;
static bool exit_key_made;

/* A thread ends: its handle may serve another thread once nothing is pending on it. */
static void thread_exits(void *arg)
{
    struct thread_handle *t = arg;
    rt_lock();
    t->h.in_use = false;
    rt_unlock();
}

static struct thread_handle *thread_handle_new(void)
{
    rt_lock();
    if (!exit_key_made) {
        int rc = pthread_key_create(&exit_key, thread_exits);
        if (rc)
            armci_die(NULL, "pthread_key_create failed: error %d", rc);
        exit_key_made = true;
    }
    struct thread_handle *t = all;
    while (t && (t->h.in_use || t->h.pending > 0))
        t = t->next;
    if (!t) {
        t = xcalloc(1, sizeof(*t));
        t->next = all;
        all = t;
    }
    t->h.in_use = true;
    rt_unlock();
    pthread_setspecific(exit_key, t);
    return t;
}

struct handle *handle_implicit(void)
{
    if (!rt_threaded)
        return &process_implicit;
    if (__builtin_expect(!mine, 0))
        mine = thread_handle_new();
    return &mine->h;
}

void handles_implicit_fini(void)
{
    while (all) {
        struct thread_handle *t = all;
        all = t->next;
        free(t);
    }
    mine = NULL;
    if (exit_key_made)
        pthread_key_delete(exit_key);
    exit_key_made = false;
    process_implicit = (struct handle){.in_use = true};
}
