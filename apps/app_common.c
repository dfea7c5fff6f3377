#include "app_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void app_usage_error(const char *prog, const char *usage, const char *fmt, ...)
{
    if (armci_msg_me() == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", prog);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n%s", usage);
        va_end(ap);
    }
    ARMCI_Finalize();
    exit(2);
}

long app_parse_long(const char *prog, const char *option, const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max)
        app_usage_error(prog, "", "%s must be an integer in [%ld, %ld], got '%s'", option, min, max,
                        text);
    return value;
}

double app_parse_double(const char *prog, const char *option, const char *text, double min,
                        double max)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    /* written so that NaN fails the range test */
    if (errno != 0 || end == text || *end != '\0' || !(value >= min && value <= max))
        app_usage_error(prog, "", "%s must be a number in [%g, %g], got '%s'", option, min, max,
                        text);
    return value;
}

void app_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: ", armci_msg_me());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    armci_msg_abort(1);
    abort(); /* armci_msg_abort does not return; this keeps noreturn honest */
}

void *app_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        app_die("out of memory allocating %zu bytes", bytes);
    return p;
}

void **app_malloc_global(size_t bytes)
{
    void **bases = app_xmalloc(sizeof(void *) * (size_t)armci_msg_nproc());
    if (ARMCI_Malloc(bases, (armci_size_t)bytes) != 0)
        app_die("ARMCI_Malloc of %zu bytes failed", bytes);
    return bases;
}

void app_free_global(void **bases)
{
    ARMCI_Free(bases[armci_msg_me()]);
    free(bases);
}

double app_noise(uint64_t seed, uint64_t index)
{
    /* splitmix64: a golden-ratio step, then its finaliser */
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + index;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53 - 0.5; /* 53 random bits: every double in range */
}

double app_now(void)
{
    return armci_timer();
}

double app_max_over_procs(double value)
{
    armci_msg_dgop(&value, 1, "max");
    return value;
}

double app_sum_over_procs(double value)
{
    armci_msg_dgop(&value, 1, "+");
    return value;
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t app_digest(const void *p, size_t bytes)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a over the bytes */
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ULL;
    /* Tied to the rank, then summed as two 32-bit halves: exact in doubles up to 2^21
     * processes, and independent of the order the sum is taken in. */
    uint64_t m = mix64(h ^ mix64((uint64_t)armci_msg_me() + 1));
    double halves[2] = {(double)(m >> 32), (double)(m & 0xffffffffu)};
    armci_msg_dgop(halves, 2, "+");
    uint64_t hi = (uint64_t)halves[0] & 0xffffffffu, lo = (uint64_t)halves[1] & 0xffffffffu;
    return hi << 32 | lo;
}

int app_all_passed(int passed)
{
    int all = passed ? 1 : 0;
    armci_msg_igop(&all, 1, "min");
    return all;
}
