/*
 * Checking helpers shared by the C programs of the GA compatibility suite.
 *
 * Every program starts with gat_init() (MPI, GA, a small MA heap) and ends
 * with `return gat_finish("name");`, which sums the failed checks of all
 * processes with GA_Igop, has rank 0 print one PASS/FAIL line, shuts GA and
 * MPI down and returns the exit code (non-zero on every rank if any check
 * failed anywhere). EXPECT() counts a failed check and reports the first few
 * on stderr. With GA_TEST_INJECT_FAILURE=1 the last rank adds one failure:
 * the suite runs that once per language to prove that a failure really
 * fails the test.
 */
#ifndef GACHECK_H
#define GACHECK_H

#include <ga.h>
#include <macdecls.h>
#include <stddef.h>
#include <stdlib.h>

extern int gat_me, gat_nproc;

void gat_init(int *argc, char ***argv);
/* The same under MPI_THREAD_MULTIPLE: several threads of a process call GA at once. */
void gat_init_threads(int *argc, char ***argv);
int gat_finish(const char *prog);
void gat_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void *gat_malloc(size_t bytes);

/* Number of virtual nodes ARMCI_NODE_SIZE asks for (1 when unset or 0). */
int gat_expected_nodes(void);

#define EXPECT(cond, ...)                              \
    do {                                               \
        if (!(cond))                                   \
            gat_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#endif
