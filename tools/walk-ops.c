/*
 * walk-ops: one blocking cross-node put and one accumulate of 4 KiB, each
 * announced by a call to walk_mark(), for scripts/walk-ops.sh to follow
 * through the library under a debugger. Run it on 2 ranks in 2 nodes.
 */
#include <armci.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { BYTES = 4096 };

/* A place for the debugger to stop: the operation named next is the one to follow. */
void walk_mark(const char *next);
__attribute__((noinline)) void walk_mark(const char *next)
{
    __asm__ volatile("" : : "r"(next) : "memory");
}

static int check(const double *got, double want, const char *what)
{
    for (size_t i = 0; i < BYTES / sizeof(double); i++) {
        if (got[i] != want) {
            fprintf(stderr, "walk-ops: %s: element %zu is %g, expected %g\n", what, i, got[i],
                    want);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    void *bases[np];
    ARMCI_Malloc(bases, BYTES);
    double *local = ARMCI_Malloc_local(BYTES);
    for (size_t i = 0; i < BYTES / sizeof(double); i++)
        local[i] = 1.0;
    ARMCI_Barrier();

    int failed = 0;
    if (me == 0 && np > 1) {
        /* Warm up: the connection to rank 1's node exists before the walk starts. */
        ARMCI_Put(local, bases[1], BYTES, 1);
        double scale = 1.0;
        ARMCI_Fence(1);

        walk_mark("put");
        ARMCI_Put(local, bases[1], BYTES, 1);
        walk_mark("acc");
        ARMCI_Acc(ARMCI_ACC_DBL, &scale, local, bases[1], BYTES, 1);
        walk_mark("end");
        ARMCI_Fence(1);
        ARMCI_Get(bases[1], local, BYTES, 1);
        failed = check(local, 2.0, "put then acc");
    }
    ARMCI_Barrier();
    ARMCI_Free_local(local);
    ARMCI_Free(bases[me]);
    ARMCI_Finalize();
    MPI_Finalize();
    return failed;
}
