/*
 * Connection establishment latency (the ODCM paper's Fig. 12). Run with
 * ARMCI_NODE_SIZE=1 and softib's paper cost model; the connection mode and
 * protocol come from the environment, so one binary measures overlap,
 * serial and static in one run of the driver (bench/run-all.sh):
 *   init       ARMCI_Init (static mode connects everything here)
 *   one-to-one each rank's first 8-byte put to the next rank, minus a steady-state put
 *              (one sample per rank, taken one rank at a time)
 *   one-to-all the last rank's first put to every other node at once, waited together
 *              (with 2 processes: its first put to the one other node, steady state included)
 * Output CSV: mode,protocol,procs,scenario,connections,usec
 */
#include <armci.h>
#include <mpi.h>

#include "bench_csv.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

static double now(void)
{
    return MPI_Wtime();
}

/*
 * A barrier that sleeps instead of spinning: with 2 cores, a rank spinning
 * in MPI_Barrier would steal the core the data server needs to answer.
 */
static void quiet_barrier(void)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done)
            usleep(100);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    ARMCI_Init();
    double init = now() - t0, init_max;
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Reduce(&init, &init_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    const char *mode = getenv("ARMCI_CONNECT") ? getenv("ARMCI_CONNECT") : "ondemand";
    const char *protocol =
        getenv("ARMCI_CONNECT_PROTOCOL") ? getenv("ARMCI_CONNECT_PROTOCOL") : "overlap";
    void **seg = malloc(sizeof(void *) * n);
    ARMCI_Malloc(seg, 64);
    long v = 1;
    quiet_barrier();

    if (me == 0) {
        fprintf(bench_csv(), "mode,protocol,procs,scenario,connections,usec\n");
        fprintf(bench_csv(), "%s,%s,%d,init,%d,%.1f\n", mode, protocol, n,
                strcmp(mode, "static") ? 0 : n - 1, init_max * 1e6);
        fflush(bench_csv());
    }
    /* One sample per rank: rank r's first put to rank r + 1 (a new node), the others idle.
     * Rank 0 prints every row, so the CSV comes from one rank in order. */
    double sample = 0;
    for (int r = 0; r + 1 < n; r++) {
        quiet_barrier();
        if (me != r)
            continue;
        double a = now();
        ARMCI_Put(&v, seg[r + 1], sizeof(v), r + 1);
        ARMCI_Fence(r + 1);
        double first = now() - a;
        a = now();
        for (int i = 0; i < 100; i++) {
            ARMCI_Put(&v, seg[r + 1], sizeof(v), r + 1);
            ARMCI_Fence(r + 1);
        }
        double steady = (now() - a) / 100;
        sample = (first - steady) * 1e6;
    }
    double *samples = me == 0 ? malloc(sizeof(double) * n) : NULL;
    MPI_Gather(&sample, 1, MPI_DOUBLE, samples, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int r = 0; me == 0 && r + 1 < n; r++)
        fprintf(bench_csv(), "%s,%s,%d,one-to-one,1,%.1f\n", mode, protocol, n, samples[r]);
    free(samples);
    /* The last rank has no connection yet: it reaches every other node at once. */
    quiet_barrier();
    double all = 0;
    if (me == n - 1 && n > 1) {
        double a = now();
        for (int t = 0; t < n - 1; t++)
            ARMCI_NbPut(&v, seg[t], sizeof(v), t, NULL);
        ARMCI_WaitAll();
        ARMCI_AllFence();
        all = (now() - a) * 1e6;
    }
    quiet_barrier(); /* rank 0 waits here asleep, not in a spinning receive */
    if (n > 1 && (me == 0 || me == n - 1)) {
        if (me == n - 1)
            MPI_Send(&all, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
        if (me == 0) {
            MPI_Recv(&all, 1, MPI_DOUBLE, n - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fprintf(bench_csv(), "%s,%s,%d,one-to-all,%d,%.1f\n", mode, protocol, n, n - 1, all);
        }
    }
    if (me == 0)
        fflush(bench_csv());
    quiet_barrier();
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
