/*
 * An unlock lost with a broken connection must not hang the job. Ranks 1..n-1 take turns
 * on a mutex hosted by rank 0 (Lock, a counter read and written, Unlock), and every
 * iteration ends in MPI_Barrier: between their ARMCI calls all ranks wait in MPI, so no
 * rank drives the progress of another. Under ARMCI_TEST_HOOKS=128 (the server loses a
 * request its device acknowledged, and its end breaks, every 97th request) some of the lost
 * requests are unlocks: unless ARMCI_Unlock waits for the server to have it, its rank goes
 * on into the barrier while the next rank waits in ARMCI_Lock for that unlock, forever.
 * Rank 1 also adds to a second counter by Rmw each iteration: then an iteration is not a
 * divisor of 96 requests at the server (2 per rank and one), and the lost requests, 97 apart
 * and each replayed (one more), fall on every kind instead of always the same one.
 * The counters must end at exactly (n-1) x iterations and iterations: each step once.
 *
 *   test_unlock_lost [ITERATIONS]   (default 200; run with ARMCI_NODE_SIZE=1)
 */
#include <mpi.h>
#include <armci.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    int iterations = argc > 1 ? atoi(argv[1]) : 200;
    CHECK(n >= 3 && iterations > 0, "run with 3 or more processes and ITERATIONS > 0");
    void **seg = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(seg, 2 * sizeof(long));
    memset(seg[me], 0, 2 * sizeof(long));
    ARMCI_Create_mutexes(1);
    ARMCI_Barrier();

    for (int i = 0; i < iterations; i++) {
        if (me > 0) {
            ARMCI_Lock(0, 0);
            long v = -1;
            ARMCI_Get(seg[0], &v, sizeof(v), 0);
            v++;
            ARMCI_Put(&v, seg[0], sizeof(v), 0);
            ARMCI_Fence(0);
            ARMCI_Unlock(0, 0);
        }
        if (me == 1) {
            long old;
            ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, (long *)seg[0] + 1, 1, 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    ARMCI_Barrier();
    if (me == 0) {
        volatile long *counter = seg[0];
        CHECK(counter[0] == (long)(n - 1) * iterations, "the locked counter is %ld, expected %ld",
              counter[0], (long)(n - 1) * iterations);
        CHECK(counter[1] == iterations, "the Rmw counter is %ld, expected %d", counter[1],
              iterations);
    }
    ARMCI_Destroy_mutexes();
    ARMCI_Free(seg[me]);
    free(seg);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
