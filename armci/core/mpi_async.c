/* Open MPI's async progress thread, emptied before MPI_Finalize (mpi_async.h says why). */
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NOLOAD, dladdr */
#include "core/mpi_async.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "core/error.h"

/* libopen-pal's entry points (opal/runtime/opal_progress_threads.h) and libevent's. */
typedef void *(*progress_thread_init_fn)(const char *name);
typedef int (*progress_thread_finalize_fn)(const char *name);
typedef int (*event_base_once_fn)(void *base, int fd, short events,
                                  void (*cb)(int fd, short events, void *arg), void *arg,
                                  const struct timeval *tv);
#define EV_TIMEOUT_FLAG 0x01 /* libevent's EV_TIMEOUT */

/* Long enough for a thread starved on a loaded host; then we give up (and may crash as before). */
#define DRAIN_SECONDS 30

static int drained; /* set by the callback, on Open MPI's thread */

static void mark_drained(int fd, short events, void *arg)
{
    (void)fd, (void)events, (void)arg;
    __atomic_store_n(&drained, 1, __ATOMIC_RELEASE);
}

/* Open MPI up to 4.x: the versions whose finalize closes the pmix component before the thread. */
static bool is_affected_open_mpi(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS)
        return false;
    version[len < (int)sizeof(version) ? len : (int)sizeof(version) - 1] = '\0';
    int major = 0;
    return sscanf(version, "Open MPI v%d.", &major) == 1 && major >= 2 && major <= 4;
}

/* libevent's event_base_once as libopen-pal links it: its own dependency, or built in (renamed). */
static event_base_once_fn find_event_base_once(void *in_libopen_pal)
{
    Dl_info info;
    if (!dladdr(in_libopen_pal, &info) || !info.dli_fname)
        return NULL;
    void *pal = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!pal)
        return NULL;
    /* dlsym on a handle searches the library, then its dependencies: the libevent it uses,
     * not another one the process may have loaded. */
    event_base_once_fn once = (event_base_once_fn)dlsym(pal, "opal_libevent2022_event_base_once");
    if (!once)
        once = (event_base_once_fn)dlsym(pal, "event_base_once");
    dlclose(pal);
    return once;
}

void mpi_async_drain(void)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down || !is_affected_open_mpi())
        return;
    progress_thread_init_fn thread_init =
        (progress_thread_init_fn)dlsym(RTLD_DEFAULT, "opal_progress_thread_init");
    progress_thread_finalize_fn thread_finalize =
        (progress_thread_finalize_fn)dlsym(RTLD_DEFAULT, "opal_progress_thread_finalize");
    if (!thread_init || !thread_finalize)
        return;
    event_base_once_fn once = find_event_base_once((void *)thread_init);
    if (!once)
        return;

    /* NULL names the shared thread: its event base, one more reference to it. */
    void *base = thread_init(NULL);
    if (!base)
        return;
    __atomic_store_n(&drained, 0, __ATOMIC_RELAXED);
    struct timeval now = {0, 0}; /* a zero timeout: activated at once, behind what is queued */
    if (once(base, -1, EV_TIMEOUT_FLAG, mark_drained, NULL, &now) == 0) {
        struct timespec nap = {0, 200000}; /* sleep, not spin: that thread may need this core */
        long naps = (long)DRAIN_SECONDS * 1000000000L / nap.tv_nsec;
        while (!__atomic_load_n(&drained, __ATOMIC_ACQUIRE) && naps-- > 0)
            nanosleep(&nap, NULL);
        if (!__atomic_load_n(&drained, __ATOMIC_ACQUIRE))
            armci_log("Open MPI's async progress thread did not run in %d s; finalizing anyway",
                      DRAIN_SECONDS);
    }
    thread_finalize(NULL); /* our reference; the thread stays Open MPI's */
}
