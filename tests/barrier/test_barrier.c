/*
 * Barrier correctness: thousands of consecutive barriers, with random
 * delays in random ranks, and a shared counter every process increments
 * just before each barrier: after barrier k it must read at least
 * n * (k + 1), or somebody left before everyone had entered. Puts issued
 * before ARMCI_Barrier must be visible everywhere after it.
 * Usage: test_barrier [iterations]
 */
#include <mpi.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    int iters = argc > 1 ? atoi(argv[1]) : 1000;

    void **counter = malloc(sizeof(void *) * n);
    ARMCI_Malloc(counter, sizeof(long));
    *(long *)counter[me] = 0;
    void **board = malloc(sizeof(void *) * n);
    ARMCI_Malloc(board, sizeof(long) * n);
    memset(board[me], 0, sizeof(long) * n);
    ARMCI_Barrier();

    uint64_t rs = 0x9e3779b9ULL * (uint64_t)(me + 1);
    for (int k = 0; k < iters; k++) {
        if (test_rand(&rs) % 4 == 0)
            usleep((useconds_t)(test_rand(&rs) % 200));
        long old;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, counter[0], 1, 0);
        bool with_puts = k % 16 == 0;
        if (with_puts) {
            /* Tell everybody "I reached k"; ARMCI_Barrier completes the puts first. */
            for (int t = 0; t < n; t++)
                ARMCI_PutValueLong(k + 1, (long *)board[t] + me, t);
        }
        if (with_puts || k % 2 == 0)
            ARMCI_Barrier();
        else
            armci_msg_barrier();
        long seen = ARMCI_GetValueLong(counter[0], 0);
        CHECK(seen >= (long)n * (k + 1),
              "left barrier %d having seen %ld arrivals, expected at least %ld", k, seen,
              (long)n * (k + 1));
        if (with_puts) {
            for (int w = 0; w < n; w++)
                CHECK(((volatile long *)board[me])[w] == k + 1,
                      "after barrier %d the put of rank %d is not visible", k, w);
        }
    }
    ARMCI_Barrier();
    ARMCI_Free(board[me]);
    ARMCI_Free(counter[me]);
    free(board);
    free(counter);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
