/*
 * A cap on connections (ARMCI_MAX_CONNECTIONS): every process keeps talking
 * to every other node, round after round, in an order that changes, so its
 * least recently used connections are closed and opened again all along.
 * Checked:
 *   - after every operation, the process holds at most the cap;
 *   - every byte arrives: each rank puts its own pattern into its slice at
 *     every other rank, reads it back, accumulates into counters everybody
 *     shares, and fetch-and-adds; the owners check their memory at the end
 *     against what an uncapped run must produce;
 *   - with more nodes than the cap, connections were closed and reopened;
 *   - no operation is lost across a close: each round first puts and
 *     accumulates to every target without waiting (non-blocking and blocking
 *     puts in turn, non-blocking accumulates), so reaching the next target
 *     closes connections while operations to the others are outstanding; a
 *     close must wait for them (checked: some closes happened in that phase).
 *   - with only ARMCI_MAX_SERVER_CONNECTIONS, servers had clients close.
 * Usage: test_cap ROUNDS   (ARMCI_MAX_CONNECTIONS set in the environment)
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "odcm/cm.h"
#include "odcm/cm_server.h"
#include "testutil.h"

#define SLICE 4096 /* bytes each rank owns at each rank */

static int me, n, cap;
static void **seg, **shared;

static void check_cap(const char *after)
{
    if (cap)
        CHECK(cm_conn_count() <= cap, "%d connections after %s, cap %d", cm_conn_count(), after,
              cap);
}

static uint64_t seed_of(int writer, int target, int round)
{
    return (uint64_t)writer * 7919 + (uint64_t)target * 104729 + (uint64_t)round * 13;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    n = armci_msg_nproc();
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    const char *c = getenv("ARMCI_MAX_CONNECTIONS");
    cap = c ? atoi(c) : 0;

    seg = malloc(sizeof(void *) * (size_t)n);
    shared = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(seg, (armci_size_t)n * SLICE);
    ARMCI_Malloc(shared, 2 * sizeof(long));
    memset(seg[me], 0, (size_t)n * SLICE);
    memset(shared[me], 0, 2 * sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);

    unsigned char *out = malloc((size_t)n * SLICE), *in = malloc(SLICE);
    long ones[1] = {1}, one = 1;
    long closed_in_flight = 0; /* closes while our non-blocking operations were outstanding */
    for (int round = 0; round < rounds; round++) {
        /* Another order every round: least recently used changes all the time. */
        int dir = round % 2 ? 1 : n - 1;
        /* First a put and an accumulate to every target, none waited for: at the cap, reaching
         * the next target closes a connection while the operations to the others are still
         * outstanding (every other put non-blocking, the rest blocking; the accumulates
         * non-blocking). A close must wait for them, not lose them. */
        long closed_before = cm_stats().closed;
        for (int k = 1; k < n; k++) {
            int target = (me + k * dir) % n;
            char *remote = (char *)seg[target] + (size_t)me * SLICE;
            unsigned char *src = out + (size_t)target * SLICE;
            fill_pattern(src, SLICE, seed_of(me, target, round));
            if (k % 2)
                ARMCI_NbPut(src, remote, SLICE, target, NULL);
            else
                ARMCI_Put(src, remote, SLICE, target);
            check_cap("a put");
            /* Answered by the target's data server: lost if the server forgets it at a close. */
            ARMCI_NbAcc(ARMCI_ACC_LNG, &one, ones, shared[target], sizeof(long), target, NULL);
            check_cap("an accumulate");
        }
        closed_in_flight += cm_stats().closed - closed_before;
        ARMCI_WaitAll();
        for (int k = 1; k < n; k++) {
            int target = (me + k * dir) % n;
            char *remote = (char *)seg[target] + (size_t)me * SLICE;
            long old;
            ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, (long *)shared[target] + 1, 1, target);
            check_cap("a read-modify-write");
            ARMCI_Fence(target);
            memset(in, 0, SLICE);
            ARMCI_Get(remote, in, SLICE, target);
            check_cap("a get");
            long bad = check_pattern(in, SLICE, seed_of(me, target, round));
            CHECK(bad < 0, "round %d, target %d: byte %ld differs", round, target, bad);
        }
    }
    ARMCI_AllFence();
    MPI_Barrier(MPI_COMM_WORLD);

    /* What an uncapped run leaves: every writer's last round, and the counts. */
    for (int w = 0; w < n; w++) {
        if (w == me)
            continue;
        long bad = check_pattern((unsigned char *)seg[me] + (size_t)w * SLICE, SLICE,
                                 seed_of(w, me, rounds - 1));
        CHECK(bad < 0, "rank %d's slice here: byte %ld differs", w, bad);
    }
    long *counts = shared[me];
    long expect = (long)(n - 1) * rounds;
    CHECK(counts[0] == expect && counts[1] == expect, "counters %ld, %ld, expected %ld", counts[0],
          counts[1], expect);

    int nodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    struct cm_stats st = cm_stats();
    if (cap && nodes - 1 > cap) {
        CHECK(st.closed > 0 && st.reopened > 0, "no connection closed (%ld) or reopened (%ld)",
              st.closed, st.reopened);
        CHECK(closed_in_flight > 0, "no connection closed while operations were outstanding");
        CHECK(st.peak <= cap, "%ld connections at once, cap %d", st.peak, cap);
    }
    long closed = st.closed, total;
    MPI_Reduce(&closed, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    const char *sc = getenv("ARMCI_MAX_SERVER_CONNECTIONS");
    int server_cap = sc ? atoi(sc) : 0;
    long in_flight_total;
    MPI_Reduce(&closed_in_flight, &in_flight_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("cap %d: %ld connections closed and reopened over the job, %ld of them while "
               "operations were outstanding\n",
               cap, total, in_flight_total);
        /* Only a server's requests close anything when clients have no cap of their own. */
        if (server_cap > 0 && n - 1 > server_cap)
            CHECK(total > 0, "servers at a cap of %d asked nobody to close", server_cap);
    }

    TEST_DONE();
    free(out);
    free(in);
    ARMCI_Free(shared[me]);
    ARMCI_Free(seg[me]);
    free(seg);
    free(shared);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
