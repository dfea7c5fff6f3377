/* Small helpers shared by every module: checked allocation, alignment, time. */
#ifndef ARMCI_CORE_UTIL_H
#define ARMCI_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)     ((a) < (b) ? (a) : (b))
#define MAX(a, b)     ((a) > (b) ? (a) : (b))
#define CACHE_LINE    64

/* Allocation that aborts the job (naming the size) instead of returning NULL. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
void *xmemalign(size_t align, size_t size);
/* Sets O_NONBLOCK on fd (what names it for the error message). */
void set_nonblocking(int fd, const char *what);

/* Page-aligned memory meant for registration (huge pages when large). */
void *xmalloc_registrable(size_t size);

static inline size_t align_up(size_t n, size_t align)
{
    return (n + align - 1) & ~(align - 1);
}

static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A retransmission timer that fires this long after its deadline means that no thread drove
 * progress meanwhile (the process was computing, or in MPI): the silence before it is not the
 * peer's, and a timeout counts anew from then. Waiting threads poll every few milliseconds. */
#define TIMER_AWAY_SECONDS 0.5

/* Pause inside a spin-wait: lets the other hyperthread/process run. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
