/*
 * Test aid (LD_PRELOAD): starves Open MPI's async progress thread once, as a loaded host
 * does. After a callback of the pmix component (mca_pmix_*.so) is queued on a libevent base,
 * the thread looping on that base sleeps ASYNC_STALL_MS (default 1000) once, so the callback
 * is still queued when MPI_Finalize unloads the component (core/mpi_async.h). Without
 * mpi_async_drain the job dies of SIGSEGV after its work is done.
 *
 * It reads two fields of libevent 2.1's struct event (ev_callback at 0x18, ev_base at 0x40,
 * x86-64): Debian 12's libevent-2.1-7. It names the libevent it runs with, so that
 * async-stall.sh fails where that layout should hold and no callback was seen (the test would
 * no longer test the drain), and skips elsewhere.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EV_CALLBACK_OFFSET 0x18
#define EV_BASE_OFFSET     0x40

static void *component_base;      /* the base a component callback was queued on */
static __thread void *looping_on; /* the base this thread runs */
static int stalled;

void event_active(void *ev, int res, short ncalls);
int event_base_loop(void *base, int flags);

void event_active(void *ev, int res, short ncalls)
{
    static void (*real)(void *, int, short);
    if (!real)
        real = (void (*)(void *, int, short))dlsym(RTLD_NEXT, "event_active");
    Dl_info info;
    void *callback = *(void **)((char *)ev + EV_CALLBACK_OFFSET);
    if (!__atomic_load_n(&component_base, __ATOMIC_ACQUIRE) && dladdr(callback, &info) &&
        info.dli_fname && strstr(info.dli_fname, "mca_pmix_")) {
        __atomic_store_n(&component_base, *(void **)((char *)ev + EV_BASE_OFFSET),
                         __ATOMIC_RELEASE);
        if (getenv("ASYNC_STALL_SEEN"))
            (void)!write(2, "async-stall: a component callback queued\n", 41);
    }
    real(ev, res, ncalls);
}

int event_base_loop(void *base, int flags)
{
    static int (*real)(void *, int);
    if (!real)
        real = (int (*)(void *, int))dlsym(RTLD_NEXT, "event_base_loop");
    static int named;
    const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "event_get_version");
    if (version && getenv("ASYNC_STALL_SEEN") &&
        !__atomic_exchange_n(&named, 1, __ATOMIC_ACQ_REL)) {
        char line[96];
        int len = snprintf(line, sizeof(line), "async-stall: libevent %s\n", version());
        (void)!write(2, line, (size_t)len);
    }
    looping_on = base;
    return real(base, flags);
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    static int (*real)(struct pollfd *, nfds_t, int);
    if (!real)
        real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
    int r = real(fds, n, timeout);
    void *base = __atomic_load_n(&component_base, __ATOMIC_ACQUIRE);
    if (base && looping_on == base && !__atomic_exchange_n(&stalled, 1, __ATOMIC_ACQ_REL)) {
        const char *ms = getenv("ASYNC_STALL_MS");
        usleep((useconds_t)(ms ? atoi(ms) : 1000) * 1000);
    }
    return r;
}
