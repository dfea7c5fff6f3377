/*
 * A node lost in the middle of a job: the survivors, waiting on it, must end
 * with an error that names it, in bounded time, never hang.
 *
 *   test_node_loss MODE     (4 processes, ARMCI_NODE_SIZE=2: node 1 = ranks 2 and 3)
 *
 * Every rank first talks to every other (connections open, data checked),
 * then node 1's ranks wait a moment and die by SIGKILL, master and data
 * server with them, while the survivors wait on node 1:
 *   barrier  in ARMCI_Barrier, for node 1's barrier flag;
 *   lock     in ARMCI_Lock, for a grant from node 1's data server (rank 2
 *            holds the mutex, the request was delivered and queued);
 *   acc      in ARMCI_Fence after accumulates node 1's server has received.
 * And, for the multi-host fault cases (tests/multihost), a steady workload
 * that a fault may hit from outside:
 *   steady S every rank accumulates into and puts to every other, gets
 *            back, and checks all of it after each ARMCI_Barrier, for S
 *            seconds (rank 0 decides when to stop, by a put: nothing but
 *            ARMCI calls, so a lost host is met in ARMCI's waits); prints
 *            PASS with the rounds done when every check held.
 * Nothing the survivors posted fails: their requests were all acknowledged
 * before node 1 went. Only asking whether it is still there finds it lost.
 * Run under mpirun with orte_enable_recovery (Open MPI) so that the launcher
 * leaves the survivors alone, as when a host vanishes without a word.
 * A survivor that gets through prints "survived" and exits 0 (the test then
 * fails: it expects an error naming node 1).
 */
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define WORDS 512
/* Words of the steady workload in each rank's block: counters, stamps, stop. */
#define COUNTERS 16 /* after the 16 words of the first check */
#define STAMPS 64
#define STOP 128

static void steady(void **base, double seconds)
{
    int me = armci_msg_me(), n = armci_msg_nproc();
    long *mine = base[me];
    double start = MPI_Wtime();
    long scale = 1, rounds = 0;
    for (long round = 1;; round++) {
        long add = me + 1, stamp = round * 1000 + me, got = 0;
        for (int q = 0; q < n; q++) {
            if (q == me)
                continue;
            ARMCI_Acc(ARMCI_ACC_LNG, &scale, &add, (long *)base[q] + COUNTERS + me, sizeof(long), q);
            ARMCI_Put(&stamp, (long *)base[q] + STAMPS + me, sizeof(long), q);
        }
        if (me == 0 && MPI_Wtime() - start > seconds)
            for (int q = 0; q < n; q++)
                ARMCI_Put(&round, (long *)base[q] + STOP, sizeof(long), q);
        ARMCI_Barrier();
        for (int p = 0; p < n; p++) {
            if (p == me)
                continue;
            if (mine[COUNTERS + p] != round * (p + 1) || mine[STAMPS + p] != round * 1000 + p) {
                fprintf(stderr, "rank %d round %ld: from rank %d counter %ld stamp %ld\n", me,
                        round, p, mine[COUNTERS + p], mine[STAMPS + p]);
                ARMCI_Error("test_node_loss steady: wrong data", p);
            }
        }
        int next = (me + 1) % n;
        ARMCI_Get((long *)base[next] + STAMPS + me, &got, sizeof(long), next);
        if (got != stamp)
            ARMCI_Error("test_node_loss steady: get returned a wrong stamp", next);
        rounds = round;
        ARMCI_Barrier();
        /* Rank 0 may already have stopped in the next round: only its round counts. */
        if (mine[STOP] && mine[STOP] <= round)
            break;
    }
    printf("PASS steady: rank %d, %ld rounds in %.1f s, every check held\n", me, rounds,
           MPI_Wtime() - start);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    const char *mode = argc > 1 ? argv[1] : "barrier";
    if (n != 4) {
        fprintf(stderr, "test_node_loss: needs 4 processes, got %d\n", n);
        ARMCI_Error("test_node_loss: wrong process count", n);
    }

    void **base = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(base, WORDS * sizeof(long));
    ARMCI_Create_mutexes(1);
    long *mine = base[me];
    for (int i = 0; i < WORDS; i++)
        mine[i] = 0;
    ARMCI_Barrier();

    /* Everyone reaches everyone: connections open, data checked. */
    long stamp[4];
    for (int p = 0; p < n; p++) {
        for (int k = 0; k < 4; k++)
            stamp[k] = 1000 * me + p * 10 + k;
        ARMCI_Put(stamp, (long *)base[p] + 4 * me, sizeof(stamp), p);
    }
    ARMCI_Barrier();
    for (int p = 0; p < n; p++)
        for (int k = 0; k < 4; k++)
            if (mine[4 * p + k] != 1000 * p + me * 10 + k) {
                fprintf(stderr, "rank %d: word %d from %d is %ld\n", me, k, p, mine[4 * p + k]);
                ARMCI_Error("test_node_loss: data check failed before the loss", p);
            }

    if (strcmp(mode, "steady") == 0) {
        ARMCI_Barrier();
        steady(base, argc > 2 ? atof(argv[2]) : 30);
        ARMCI_Finalize();
        MPI_Finalize();
        return 0;
    }

    bool lost_node = me >= 2;
    if (strcmp(mode, "lock") == 0 && me == 2)
        ARMCI_Lock(0, 2); /* held when node 1 dies: the survivors' requests queue behind it */
    armci_msg_barrier();
    if (lost_node) {
        sleep(2); /* the survivors are waiting on us by now */
        printf("rank %d: node 1 dies now\n", me);
        fflush(stdout);
        raise(SIGKILL);
    }

    printf("rank %d: waiting on node 1 (%s)\n", me, mode);
    fflush(stdout);
    if (strcmp(mode, "barrier") == 0) {
        ARMCI_Barrier();
    } else if (strcmp(mode, "lock") == 0) {
        ARMCI_Lock(0, 2);
    } else if (strcmp(mode, "acc") == 0) {
        long one[WORDS];
        long scale = 1;
        for (int i = 0; i < WORDS; i++)
            one[i] = 1;
        /* Accumulates keep the server of node 1 busy while it dies; the fence waits. By time,
         * not by count: a fixed count could end before node 1's death 2 s in (it did, with
         * faster accumulates), and the survivors then hung in ARMCI_Finalize's barrier. */
        double until = MPI_Wtime() + 600; /* node-loss.sh ends a run that outlives its bound */
        while (MPI_Wtime() < until) {
            ARMCI_Acc(ARMCI_ACC_LNG, &scale, one, base[2], sizeof(one), 2);
            ARMCI_Fence(2);
        }
    } else {
        ARMCI_Error("test_node_loss: unknown mode", 0);
    }
    printf("rank %d: survived the loss of node 1 (%s): no error\n", me, mode);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
