/* Checking helpers shared by the C programs of the GA suite (see gacheck.h). */
#include "gacheck.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_REPORTS 10 /* failed checks printed per process; all are counted */

int gat_me, gat_nproc;
static int failures;

static void ga_up(void)
{
    GA_Initialize();
    gat_me = GA_Nodeid();
    gat_nproc = GA_Nnodes();
    /* modest MA sizes: GA takes its temporary buffers from here */
    if (!MA_init(C_DBL, 1 << 16, 1 << 19))
        GA_Error("gat_init: MA_init failed", 0);
}

void gat_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    ga_up();
}

void gat_init_threads(int *argc, char ***argv)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "MPI granted thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ga_up();
}

void gat_fail(const char *file, int line, const char *fmt, ...)
{
    /* Threaded programs fail checks from several threads at once. */
    if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) < MAX_REPORTS) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL rank %d %s:%d: ", gat_me, file, line);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}

void *gat_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        GA_Error("gat_malloc: out of memory", (int)bytes);
    return p;
}

int gat_expected_nodes(void)
{
    const char *s = getenv("ARMCI_NODE_SIZE");
    int k = s ? atoi(s) : 0;
    if (k <= 0)
        return 1;
    return (gat_nproc + k - 1) / k;
}

int gat_finish(const char *prog)
{
    const char *inject = getenv("GA_TEST_INJECT_FAILURE");
    if (inject && atoi(inject) && gat_me == gat_nproc - 1)
        gat_fail(__FILE__, __LINE__, "injected failure (GA_TEST_INJECT_FAILURE)");
    int total = failures;
    GA_Igop(&total, 1, "+");
    if (gat_me == 0)
        printf("%s %s: %d processes, %d failed checks\n", total ? "FAIL" : "PASS", prog, gat_nproc,
               total);
    fflush(stdout);
    GA_Terminate();
    MPI_Finalize();
    /* a process with failures of its own fails even if the reduction lost them */
    return total || failures ? 1 : 0;
}
