/*
 * A job whose connections carry RDMA alone: every process puts a pattern
 * into every other's block and reads every other's back, contiguous (by
 * RDMA, never through the data server: transport/route.h), with the RDMA
 * barrier between. Checked byte for byte. pools-by-use.sh runs it to see
 * that connections that never send a request register no request buffers
 * at their data server (dataserver/credits.h).
 */
#include <mpi.h>
#include <string.h>

#include "testutil.h"

enum { SLOT = 4096 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    void **seg = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(seg, (armci_size_t)SLOT * (size_t)(n + 1));
    unsigned char *mine = (unsigned char *)seg[me] + (size_t)n * SLOT; /* the source */
    fill_pattern(mine, SLOT, (uint64_t)me + 1);
    ARMCI_Barrier();
    for (int t = 0; t < n; t++)
        if (t != me)
            ARMCI_Put(mine, (char *)seg[t] + (size_t)me * SLOT, SLOT, t);
    ARMCI_Barrier();
    for (int w = 0; w < n; w++) {
        long bad = w == me ? -1
                           : check_pattern((unsigned char *)seg[me] + (size_t)w * SLOT, SLOT,
                                           (uint64_t)w + 1);
        CHECK(bad < 0, "byte %ld of what %d put differs", bad, w);
    }
    unsigned char *got = malloc(SLOT);
    for (int t = 0; t < n; t++) {
        if (t == me)
            continue;
        ARMCI_Get((char *)seg[t] + (size_t)n * SLOT, got, SLOT, t);
        long bad = check_pattern(got, SLOT, (uint64_t)t + 1);
        CHECK(bad < 0, "byte %ld of %d's block read back differs", bad, t);
    }
    free(got);
    TEST_DONE();
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
