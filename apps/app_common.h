/*
 * Small helpers shared by the applications in apps/: option parsing that
 * fails the same way on every rank, collective allocation with an ownership
 * rule, timing and the pass/fail vote. Only the public ARMCI API is used.
 */
#ifndef ARMCI_APPS_COMMON_H
#define ARMCI_APPS_COMMON_H

#include <armci.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parses a decimal integer option value in [min, max]. Every rank parses the
 * same command line, so on bad input every rank reaches app_usage_error()
 * and the job ends cleanly with exit status 2.
 */
long app_parse_long(const char *prog, const char *option, const char *text, long min, long max);

/* The same for a finite floating-point value in [min, max]. */
double app_parse_double(const char *prog, const char *option, const char *text, double min,
                        double max);

/* Prints "prog: message" and the usage text on rank 0, finalises, exits 2. */
void app_usage_error(const char *prog, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* Aborts the whole job with a message naming the rank: for broken invariants. */
void app_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* malloc that never returns NULL (dies instead). The caller frees. */
void *app_xmalloc(size_t bytes);

/*
 * Collective ARMCI_Malloc of `bytes` on this process (sizes may differ per
 * process). Returns the table of every process's base address; release it
 * with app_free_global(), which frees both the segment and the table.
 */
void **app_malloc_global(size_t bytes);
void app_free_global(void **bases);

/* Address `offset` bytes into process `proc`'s block: arithmetic only, never dereferenced. */
static inline void *app_remote_addr(void **bases, int proc, size_t offset)
{
    return (char *)bases[proc] + offset;
}

/*
 * Reproducible pseudo-random data: a well-mixed function of (seed, index),
 * uniform in [-0.5, 0.5). Any process can regenerate any element, so inputs
 * need no communication and checks can recompute them.
 */
double app_noise(uint64_t seed, uint64_t index);

/* Wall-clock seconds. */
double app_now(void);

/* Collective: the largest of every process's value (the job's elapsed time). */
double app_max_over_procs(double value);

/* Collective: the sum of every process's value. */
double app_sum_over_procs(double value);

/*
 * Collective: a 64-bit fingerprint of every process's `bytes` at `p`, in rank
 * order, so that two runs (capped and not, static and on demand) can be
 * compared byte for byte from their RESULT lines.
 */
uint64_t app_digest(const void *p, size_t bytes);

/* Collective: 1 when every process passed its own checks. */
int app_all_passed(int passed);

#endif
