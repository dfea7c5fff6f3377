/*
 * For unit tests that link a few of the runtime's objects and stand in for
 * the rest: EXPECT (fail the test with a message), and, where the test
 * defines UNIT_TEST_RUNTIME_HELPERS before including this, the runtime's
 * warning and allocation helpers (core/error.h, core/util.h), which abort on
 * failure as the runtime's do.
 */
#ifndef ARMCI_TESTS_UNIT_TEST_H
#define ARMCI_TESTS_UNIT_TEST_H

#include <stdio.h>
#include <stdlib.h>

#define EXPECT(cond, what)                       \
    do {                                         \
        if (!(cond)) {                           \
            fprintf(stderr, "FAIL: %s\n", what); \
            return 1;                            \
        }                                        \
    } while (0)

#ifdef UNIT_TEST_RUNTIME_HELPERS
void armci_warn(const char *fmt, ...)
{
    (void)fmt;
}

void *xmalloc(size_t size)
{
    void *p = malloc(size);
    if (!p)
        abort();
    return p;
}

void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p)
        abort();
    return p;
}
#endif

#endif
