/*
 * Barrier latency, three ways in one run: ARMCI's RDMA barrier
 * (ARMCI_Barrier), MPI_Barrier, and a send/receive dissemination barrier
 * over MPI point-to-point (the "message passing" barrier of the paper).
 * Output CSV: impl,mpi_transport,procs,node_size,nodes,iterations,usec_per_barrier
 * Usage: bench_barrier NODE_SIZE_LABEL [iterations] [MPI_TRANSPORT_LABEL]
 * (the driver runs it with MPI over shared memory and over TCP: across real
 * nodes MPI's messages cross the network, as the RDMA barrier's writes do).
 */
#include <armci.h>
#include <mpi.h>

#include "bench_csv.h"
#include <stdio.h>
#include <stdlib.h>

static void dissemination_barrier(int me, int n)
{
    char token = 0;
    for (int step = 1; step < n; step <<= 1) {
        MPI_Sendrecv(&token, 1, MPI_CHAR, (me + step) % n, 77, &token, 1, MPI_CHAR,
                     (me - step + n) % n, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static double time_barrier(int which, int me, int n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (which == 0)
            ARMCI_Barrier();
        else if (which == 1)
            MPI_Barrier(MPI_COMM_WORLD);
        else
            dissemination_barrier(me, n);
    }
    double t = (MPI_Wtime() - t0) / iters, worst;
    MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *node_size = argc > 1 ? argv[1] : "?";
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    const char *transport = argc > 3 ? argv[3] : "default";
    static const char *impl[] = {"armci-rdma-barrier", "mpi-barrier", "sendrecv-dissemination"};
    /* Warm up everything once (connections of the RDMA barrier are made here). */
    for (int w = 0; w < 3; w++)
        time_barrier(w, me, n, 50);
    if (me == 0)
        fprintf(bench_csv(),
                "impl,mpi_transport,procs,node_size,nodes,iterations,usec_per_barrier\n");
    for (int w = 0; w < 3; w++) {
        double t = time_barrier(w, me, n, iters);
        if (me == 0)
            fprintf(bench_csv(), "%s,%s,%d,%s,%d,%d,%.2f\n", impl[w], transport, n, node_size,
                    armci_domain_count(ARMCI_DOMAIN_SMP), iters, t * 1e6);
    }
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
