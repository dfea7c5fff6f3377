/*
 * The hybrid UD path's receive buffers keep up with the requests and answers
 * in flight, so that nothing is lost for want of a posted receive (a lost
 * datagram costs a retransmission timeout, some 200 us of an 8 B put): every
 * other rank streams blocking 8 B puts at rank 0 (one datagram each, up to a
 * window of them in flight per client, ARMCI_HYBRID_WINDOW) and reads its
 * slot back now and then (answers of a full window to each client). At the
 * end, no process's count of UD datagrams dropped because no receive was
 * posted (softib's) may have grown since every client was first heard from,
 * and rank 0's memory must hold every last value.
 * Usage: test_ud_buffers [PUTS]   (run with ARMCI_HYBRID=ud, without UD faults)
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "softib_counters.h"
#include "testutil.h"

/* UD datagrams sent to this process's QPs that found no receive posted (softib counts them
 * against the receiving process). */
static long ud_drops_nobuf(void)
{
    struct softib_counters c;
    CHECK(softib_counters_now(&c), "softib's counters cannot be read (not on softib?)");
    return (long)c.ud_drops_nobuf;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    long puts = argc > 1 ? atol(argv[1]) : 4000;
    void **seg = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(seg, (armci_size_t)n * sizeof(long));
    memset(seg[me], 0, (size_t)n * sizeof(long));
    /* First contact: the server posts a client's window of buffers once it has heard from
     * it (a burst of datagrams from clients it has not heard from yet may find too few, and
     * is retransmitted); what is counted starts after every client has been heard. */
    if (me != 0) {
        long first = 0;
        ARMCI_Get((long *)seg[0] + me, &first, sizeof(first), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long drops_before = ud_drops_nobuf();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me != 0) {
        long *slot = (long *)seg[0] + me;
        for (long i = 1; i <= puts; i++) {
            long v = (long)me << 32 | i;
            ARMCI_Put(&v, slot, sizeof(v), 0);
            if (i % 500 == 0) {
                long back = 0;
                ARMCI_Get(slot, &back, sizeof(back), 0);
                CHECK(back == v, "rank %d read %lx back, put %lx", me, back, v);
            }
        }
        ARMCI_AllFence();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        for (int r = 1; r < n; r++)
            CHECK(((long *)seg[0])[r] == ((long)r << 32 | puts), "rank %d's slot holds %lx", r,
                  ((long *)seg[0])[r]);
    long drops = ud_drops_nobuf() - drops_before;
    CHECK(drops == 0, "%ld UD datagrams to this process found no receive buffer", drops);
    MPI_Barrier(MPI_COMM_WORLD);
    ARMCI_Free(seg[me]);
    free(seg);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
