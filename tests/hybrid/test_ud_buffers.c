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
 * Then the answers of many nodes at once: every rank gets 16 KiB blocks from
 * every other rank, WINDOW non-blocking gets in flight (each cut into 5
 * requests over UD: 80 answers on their way from all the nodes together),
 * checked byte for byte; again no datagram may find no buffer.
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

#define BLOCK  (16 * 1024)
#define WINDOW 16
#define GETS   400

static unsigned char block_byte(int owner, size_t i)
{
    return (unsigned char)(owner * 31 + i * 7 + i / 251);
}

/* WINDOW non-blocking 16 KiB gets in flight, round robin over the other ranks. */
static void gets_from_everyone(void **blocks, int me, int n)
{
    static unsigned char landing[WINDOW][BLOCK];
    armci_hdl_t h[WINDOW];
    int from[WINDOW];
    for (int i = 0; i < GETS + WINDOW; i++) {
        int w = i % WINDOW;
        if (i >= WINDOW) {
            ARMCI_Wait(&h[w]);
            for (size_t k = 0; k < BLOCK; k++)
                if (landing[w][k] != block_byte(from[w], k)) {
                    CHECK(0, "rank %d: byte %zu of rank %d's block is %u, not %u", me, k, from[w],
                          landing[w][k], block_byte(from[w], k));
                    break;
                }
        }
        if (i >= GETS)
            continue;
        from[w] = (me + 1 + i % (n - 1)) % n;
        memset(landing[w], 0, BLOCK);
        ARMCI_INIT_HANDLE(&h[w]);
        ARMCI_NbGet(blocks[from[w]], landing[w], BLOCK, from[w], &h[w]);
    }
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

    void **blocks = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(blocks, BLOCK);
    for (size_t k = 0; k < BLOCK; k++)
        ((unsigned char *)blocks[me])[k] = block_byte(me, k);
    ARMCI_Barrier();
    drops_before = ud_drops_nobuf();
    gets_from_everyone(blocks, me, n);
    MPI_Barrier(MPI_COMM_WORLD);
    drops = ud_drops_nobuf() - drops_before;
    CHECK(drops == 0, "%ld answers of many nodes found no receive buffer here", drops);
    MPI_Barrier(MPI_COMM_WORLD);
    ARMCI_Free(blocks[me]);
    free(blocks);
    ARMCI_Free(seg[me]);
    free(seg);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
