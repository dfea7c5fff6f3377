/* What a benchmark run is asked to measure, from the environment (BENCH_OPS, BENCH_SIZES...). */
#ifndef BENCH_ENV_H
#define BENCH_ENV_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Whether `item` is in the comma-separated list in environment variable `var` (unset: yes). */
static inline bool bench_listed(const char *var, const char *item)
{
    const char *list = getenv(var);
    if (!list || !*list)
        return true;
    size_t n = strlen(item);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, item, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

#endif
