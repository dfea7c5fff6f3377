/*
 * A process that issues and then computes for longer than the timeouts
 * before it waits. Nothing drives its progress meanwhile, so a connection
 * message or a UD request lost on the way is noticed only at the wait: it
 * must be sent again then, not taken for a dead node because the timeout
 * passed. Every round puts a small and a larger block to another node with
 * non-blocking puts, sleeps, waits, and reads both back byte for byte.
 * The setups measured across a sleep must not stretch the retransmission
 * timeout of the next ones past the connect timeout either. With "small", only
 * the small block: over the hybrid UD path, no connection is made at all.
 * Usage: test_away ROUNDS AWAY_MS [small]
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hybrid_stats.h"
#include "odcm/cm.h"
#include "testutil.h"

#define SMALL 8     /* over UD when the hybrid path is on */
#define LARGE 16384 /* over RC */
#define SLOT  (SMALL + LARGE)

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    CHECK(argc == 3 || argc == 4, "usage: test_away ROUNDS AWAY_MS [small]");
    int rounds = atoi(argv[1]);
    long away_ms = atol(argv[2]);
    size_t len = argc == 4 && !strcmp(argv[3], "small") ? SMALL : SLOT;
    CHECK(n >= 3 && rounds > 0 && away_ms >= 0, "needs 3 processes or more and ROUNDS > 0");

    void **seg = calloc((size_t)n, sizeof(void *));
    ARMCI_Malloc(seg, (armci_size_t)n * SLOT);
    memset(seg[me], 0, (size_t)n * SLOT);
    unsigned char *out = malloc(SLOT), *back = malloc(SLOT);
    CHECK(seg && out && back, "out of memory");
    ARMCI_Barrier();

    for (int r = 0; r < rounds; r++) {
        int target = (me + 1 + r % (n - 1)) % n;
        uint64_t seed = (uint64_t)me * 1000 + (uint64_t)r + 1;
        fill_pattern(out, len, seed);
        unsigned char *slot = (unsigned char *)seg[target] + (size_t)me * SLOT;
        armci_hdl_t small, large;
        ARMCI_INIT_HANDLE(&small);
        ARMCI_INIT_HANDLE(&large);
        /* The small one last: nothing of ours polls after the test (over UD, its answer or
         * the request itself may be lost while we are away). */
        if (len > SMALL)
            ARMCI_NbPut(out + SMALL, slot + SMALL, LARGE, target, &large);
        ARMCI_NbPut(out, slot, SMALL, target, &small);
        ARMCI_Test(&small); /* progress once: what waited to be sent goes, its timer starts */
        sleep_ms(away_ms); /* "computing": no call into ARMCI */
        ARMCI_Wait(&small);
        if (len > SMALL)
            ARMCI_Wait(&large);
        ARMCI_Fence(target);
        memset(back, 0, SLOT);
        ARMCI_Get(slot, back, SMALL, target);
        if (len > SMALL)
            ARMCI_Get(slot + SMALL, back + SMALL, LARGE, target);
        long bad = check_pattern(back, len, seed);
        CHECK(bad < 0, "round %d: byte %ld read back from rank %d differs", r, bad, target);
    }

    long tries[2] = {cm_retransmissions(), hybrid_stats.retransmissions}, total[2];
    MPI_Allreduce(tries, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("away: %d rounds of %ld ms, retransmissions: %ld of connection messages, %ld of "
               "UD requests\n",
               rounds, away_ms, total[0], total[1]);
    CHECK(total[0] + total[1] > 0, "UD loss was injected but nothing was retransmitted");

    ARMCI_Barrier();
    ARMCI_Free(seg[me]);
    free(seg);
    free(out);
    free(back);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
