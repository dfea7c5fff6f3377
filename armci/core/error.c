#define _GNU_SOURCE /* process_vm_readv, mincore */
#include "core/error.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>


static int my_rank_or_minus_one(void)
{
    int up = 0;
    MPI_Initialized(&up);
    if (!up)
        return -1;
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void vreport(const char *prefix, const char *call, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (call)
        fprintf(stderr, "%s (rank %d) in %s: %s\n", prefix, my_rank_or_minus_one(), call, msg);
    else
        fprintf(stderr, "%s (rank %d): %s\n", prefix, my_rank_or_minus_one(), msg);
    fflush(stderr);
}

#define MAX_DIE_HOOKS 4
static void (*die_hooks[MAX_DIE_HOOKS])(void);

void armci_on_die(void (*fn)(void))
{
    for (int i = 0; i < MAX_DIE_HOOKS; i++) {
        if (die_hooks[i] == fn)
            return;
        if (!die_hooks[i]) {
            die_hooks[i] = fn;
            return;
        }
    }
    abort(); /* a programming error: raise MAX_DIE_HOOKS */
}

/*
 * Before MPI_Abort: waits (at most 2 s) until the launcher has read what we
 * wrote to stderr when it is a pipe. MPICH's Hydra kills its proxies on an
 * abort and drops what they had not read yet: a death test then saw no
 * message at all now and then (1 run in about 30 when every rank dies).
 */
static void wait_stderr_read(void)
{
    struct timespec pause = {0, 1000000};
    for (int i = 0; i < 2000; i++) {
        int unread = 0;
        if (ioctl(STDERR_FILENO, FIONREAD, &unread) != 0 || unread <= 0)
            return;
        nanosleep(&pause, NULL);
    }
}

void armci_die(const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("ARMCI error", call, fmt, ap);
    va_end(ap);
    for (int i = 0; i < MAX_DIE_HOOKS && die_hooks[i]; i++)
        die_hooks[i]();

    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    wait_stderr_read();
    if (up && !down)
        MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

void armci_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("ARMCI warning", NULL, fmt, ap);
    va_end(ap);
}

/* ARMCI_VERBOSE, as the configuration found it (config.c): error reporting sits below the
 * configuration, which reports its own errors through it. */
static bool log_on;

void armci_log_enable(bool on)
{
    log_on = on;
}

void armci_log(const char *fmt, ...)
{
    if (!log_on)
        return;
    va_list ap;
    va_start(ap, fmt);
    vreport("ARMCI", NULL, fmt, ap);
    va_end(ap);
}

void check_ptr(const char *call, const char *arg, const void *ptr)
{
    if (!ptr)
        armci_die(call, "argument %s is a null pointer", arg);
}

void check_nonneg(const char *call, const char *arg, long value)
{
    if (value < 0)
        armci_die(call, "argument %s=%ld is negative", arg, value);
}

/*
 * The lowest address mapped when first asked (the program's first segment:
 * nothing lives below it unless mapped there on purpose later). A local
 * buffer below it is almost surely NULL plus an offset, checked exactly.
 */
static uintptr_t low_water(void)
{
    static uintptr_t low;
    uintptr_t known = __atomic_load_n(&low, __ATOMIC_RELAXED);
    if (known)
        return known;
    unsigned long start = 4096;
    FILE *f = fopen("/proc/self/maps", "r");
    if (f) {
        if (fscanf(f, "%lx", &start) != 1)
            start = 4096;
        fclose(f);
    }
    known = start ? start : 1;
    __atomic_store_n(&low, known, __ATOMIC_RELAXED);
    return known;
}

/* mincore fails with ENOMEM on an unmapped page: an exact test that cannot fault. */
static bool page_mapped(const void *ptr)
{
    long size = sysconf(_SC_PAGESIZE);
    uintptr_t page = (uintptr_t)ptr & ~(uintptr_t)(size - 1);
    unsigned char vec;
    return mincore((void *)page, 1, &vec) == 0;
}

bool local_ptr_valid(const void *ptr)
{
    return (uintptr_t)ptr >= low_water() || (ptr && page_mapped(ptr));
}

void check_local(const char *call, const char *arg, const void *ptr)
{
    if (local_ptr_valid(ptr))
        return;
    if (!ptr)
        armci_die(call, "argument %s is a null pointer", arg);
    /* What a caller gets from a NULL buffer plus an offset, e.g. GA's patch of a NULL buffer. */
    armci_die(call, "argument %s=%p is not mapped memory (a null pointer plus an offset?)", arg,
              ptr);
}

void safe_prefix(const char *s, size_t known, char *out, size_t size)
{
    /* One byte per element: process_vm_readv stops at the first unreadable one, no fault. */
    struct iovec local, remote[64];
    size_t want = size - 1 < 64 ? size - 1 : 64;
    for (size_t i = 0; i < want; i++)
        remote[i] = (struct iovec){(void *)(s + i), 1};
    local = (struct iovec){out, want};
    ssize_t got = process_vm_readv(getpid(), &local, 1, remote, want, 0);
    size_t n = got >= 0 ? (size_t)got : (known < want ? known : want);
    if (got < 0)
        memcpy(out, s, n);
    out[n] = 0;
    for (size_t i = 0; out[i]; i++)
        if (out[i] < 0x20 || out[i] > 0x7e)
            out[i] = '?';
}
