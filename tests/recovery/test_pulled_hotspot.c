/*
 * Pulled payloads at a hot spot: every rank off node 0 accumulates into its own region of rank
 * 0's segment, ROUNDS times, 16 KiB at a time from malloc'd memory (past the data server's
 * request buffer: the payload waits in a bounce buffer until the server reads it, DS_PULLED),
 * blocking and non-blocking in turn, each with its own value, and puts the round number to a
 * slot of its own after each (a small request that waits behind the pull on its connection).
 * One server read after another: a client's blocking accumulate has long returned, and its
 * bounce buffers are taken again, by the time the server reads its payload. Rank 0 then checks
 * every sum and slot exactly: a payload read from a buffer already reused, lost or applied
 * twice shows. With SOFTIB_RC_BREAK (run-breaks.sh) the connections break under it too.
 *
 *   test_pulled_hotspot [ROUNDS]   (default 200)
 */
#include <mpi.h>
#include <armci.h>
#include <string.h>

#include "testutil.h"

#define ELEMS 2048 /* doubles: 16 KiB */

struct region {
    double sum[ELEMS];
    long slot;
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), np = armci_msg_nproc();
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    void **seg = malloc(sizeof(void *) * (size_t)np);
    CHECK(seg, "out of memory");
    CHECK(ARMCI_Malloc(seg, me == 0 ? sizeof(struct region) * (size_t)np : 0) == 0, "ARMCI_Malloc");
    struct region *regions = seg[0];
    if (me == 0)
        memset(regions, 0, sizeof(struct region) * (size_t)np);
    double *src = malloc(sizeof(double) * ELEMS * 2);
    CHECK(src, "out of memory");
    ARMCI_Barrier();

    bool client = !ARMCI_Same_node(0);
    double one = 1.0;
    for (int k = 0; client && k < rounds; k++) {
        /* Round k's value, different for every rank and round: a wrong buffer shows. */
        double *buf = src + (k % 2) * ELEMS;
        for (int i = 0; i < ELEMS; i++)
            buf[i] = (double)(me * 100000 + k);
        armci_hdl_t h;
        if (k % 2) {
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbAcc(ARMCI_ACC_DBL, &one, buf, regions[me].sum, (int)sizeof(double) * ELEMS, 0,
                        &h);
        } else {
            ARMCI_Acc(ARMCI_ACC_DBL, &one, buf, regions[me].sum, (int)sizeof(double) * ELEMS, 0);
            for (int i = 0; i < ELEMS; i++)
                buf[i] = -1e9; /* the source is the caller's again */
        }
        long round = k;
        ARMCI_Put(&round, &regions[me].slot, sizeof(round), 0);
        if (k % 2) {
            ARMCI_Wait(&h);
            for (int i = 0; i < ELEMS; i++)
                buf[i] = -1e9;
        }
    }
    ARMCI_AllFence();
    ARMCI_Barrier();
    if (me == 0) {
        for (int r = 0; r < np; r++) {
            if (ARMCI_Same_node(r))
                continue;
            /* sum over k of (r * 100000 + k) */
            double want = (double)rounds * r * 100000.0 + (double)rounds * (rounds - 1) / 2.0;
            for (int i = 0; i < ELEMS; i++)
                CHECK(regions[r].sum[i] == want, "rank %d's sum [%d] = %.0f, not %.0f", r, i,
                      regions[r].sum[i], want);
            CHECK(regions[r].slot == rounds - 1, "rank %d's slot = %ld, not %d", r, regions[r].slot,
                  rounds - 1);
        }
        printf("%d clients x %d accumulates of 16 KiB: every sum exact\n", np - 1, rounds);
    }
    ARMCI_Barrier();
    free(src);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
