/*
 * Cold-node rate: 8-byte (or `bytes`-byte) operations to random other nodes, the traffic of
 * LJ, RandomAccess and GA's task counters at scale, where most operations go
 * to a node this process has not talked to lately. Each process issues
 * `count` non-blocking operations (ARMCI_NbPut, ARMCI_NbAcc of a long, or a
 * blocking ARMCI_Get) to a rank of another node drawn at random, waiting for
 * the oldest when `window` are outstanding, then ARMCI_AllFence; the time is
 * the slowest process's, from a barrier to a barrier. Under a connection cap
 * every operation to a node without a connection either waits for one (RC
 * only) or goes as a datagram (ARMCI_HYBRID).
 *
 * With `bytes` past a datagram's room, the medium transfers the hybrid path
 * cuts into several requests (ARMCI_HYBRID_SEGMENTED) instead of opening a
 * connection.
 *
 * Output CSV: impl,procs,node_size,cap,hybrid,op,bytes,ops,seconds,ops_per_s
 * Usage: bench_cold IMPL_NAME [count] [window] [bytes, a multiple of 8]
 */
#include <mpi.h>

#include "bench_csv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "armci.h"

#define MAX_WINDOW 256

static int me, nprocs, node_size;
static size_t bytes = sizeof(long); /* per operation */
static long *source, *landing;      /* bytes, and bytes per window slot */

/* A rank of another node, at random (nodes are node_size consecutive ranks). */
static int random_other(unsigned *seed)
{
    int my_node = me / node_size;
    for (;;) {
        int r = (int)(rand_r(seed) % (unsigned)nprocs);
        if (r / node_size != my_node)
            return r;
    }
}

static double run(const char *op, void **base, int count, int window, unsigned seed)
{
    armci_hdl_t h[MAX_WINDOW];
    double t0;
    ARMCI_Barrier();
    t0 = MPI_Wtime();
    for (int i = 0; i < count; i++) {
        int w = i % window;
        int target = random_other(&seed);
        char *remote = (char *)base[target] + (size_t)(me % 64) * bytes;
        if (i >= window)
            ARMCI_Wait(&h[w]);
        ARMCI_INIT_HANDLE(&h[w]);
        if (!strcmp(op, "put"))
            ARMCI_NbPut(source, remote, (int)bytes, target, &h[w]);
        else if (!strcmp(op, "acc"))
            ARMCI_NbAcc(ARMCI_ACC_LNG, source, source, remote, (int)bytes, target, &h[w]);
        else
            ARMCI_NbGet(remote, (char *)landing + (size_t)w * bytes, (int)bytes, target, &h[w]);
    }
    for (int w = 0; w < window && w < count; w++)
        ARMCI_Wait(&h[w]);
    ARMCI_AllFence();
    double mine = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ARMCI_Barrier();
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *impl = argc > 1 ? argv[1] : "odcm";
    int count = argc > 2 ? atoi(argv[2]) : 2000;
    int window = argc > 3 ? atoi(argv[3]) : 16;
    if (window < 1 || window > MAX_WINDOW)
        window = 16;
    if (argc > 4 && atol(argv[4]) >= (long)sizeof(long))
        bytes = (size_t)atol(argv[4]) / sizeof(long) * sizeof(long);
    const char *ns = getenv("ARMCI_NODE_SIZE");
    node_size = ns && atoi(ns) > 0 ? atoi(ns) : 1;
    const char *cap = getenv("ARMCI_MAX_CONNECTIONS");
    const char *hybrid = getenv("ARMCI_HYBRID");
    if (nprocs / node_size < 2) {
        if (me == 0)
            fprintf(stderr, "bench_cold: needs at least two nodes\n");
        ARMCI_Finalize();
        MPI_Finalize();
        return 1;
    }
    void **base = malloc(sizeof(void *) * (size_t)nprocs);
    ARMCI_Malloc(base, 64 * bytes);
    memset(base[me], 0, 64 * bytes);
    source = malloc(bytes);
    landing = malloc(bytes * (size_t)window);
    for (size_t i = 0; i < bytes / sizeof(long); i++)
        source[i] = 1;
    if (me == 0)
        fprintf(bench_csv(), "impl,procs,node_size,cap,hybrid,op,bytes,ops,seconds,ops_per_s\n");
    static const char *const ops[] = {"put", "acc", "get"};
    for (int k = 0; k < 3; k++) {
        double s = run(ops[k], base, count, window, 12345u + (unsigned)me * 7919u + (unsigned)k);
        if (me == 0)
            fprintf(bench_csv(), "%s,%d,%d,%s,%s,%s,%zu,%ld,%.4f,%.0f\n", impl, nprocs, node_size,
                    cap ? cap : "0", hybrid ? hybrid : "auto", ops[k], bytes, (long)count * nprocs,
                    s, (double)count * nprocs / s);
    }
    ARMCI_Free(base[me]);
    free(base);
    free(source);
    free(landing);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
