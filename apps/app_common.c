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

int app_all_passed(int passed)
{
    int all = passed ? 1 : 0;
    armci_msg_igop(&all, 1, "min");
    return all;
}
