/*
 * Put/Get/Acc latency and bandwidth between rank 0 and the last rank, 8 B
 * to 4 MiB, plus single-thread memcpy in the same run. Built twice: against
 * ARMCI-ODCM and against ARMCI-MPI (Debian's libarmci-mpi-dev), from this
 * same source, so the two can be compared side by side.
 *
 * Output: CSV, one row per (op, size):
 *   impl,layout,op,bytes,iterations,usec_per_op,MB_per_s
 * A blocking op's time includes its share of a final ARMCI_AllFence, so
 * puts are measured to remote completion, not just local.
 * Usage: bench_rma IMPL_NAME [max_bytes] [LAYOUT_LABEL]
 */
#include <armci.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { OP_PUT, OP_GET, OP_ACC, OP_MEMCPY };
static const char *op_name[] = {"put", "get", "acc", "memcpy"};

static int iterations_for(size_t bytes)
{
    size_t budget = 64u << 20; /* ~64 MiB moved per measurement */
    size_t it = budget / (bytes + 64);
    return (int)(it < 20 ? 20 : it > 5000 ? 5000 : it);
}

static double run(enum op op, void *local, void *remote, size_t bytes, int target, int iters)
{
    double scale = 1.0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case OP_PUT:
            ARMCI_Put(local, remote, (int)bytes, target);
            break;
        case OP_GET:
            ARMCI_Get(remote, local, (int)bytes, target);
            break;
        case OP_ACC:
            ARMCI_Acc(ARMCI_ACC_DBL, &scale, local, remote, (int)bytes, target);
            break;
        case OP_MEMCPY:
            memcpy(remote, local, bytes);
            break;
        }
    }
    if (op != OP_MEMCPY)
        ARMCI_AllFence();
    return (MPI_Wtime() - t0) / iters;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *impl = argc > 1 ? argv[1] : "armci";
    size_t max_bytes = argc > 2 ? (size_t)atol(argv[2]) : (4u << 20);
    int target = n - 1;
    const char *layout = argc > 3 ? argv[3] : ARMCI_Same_node(target) ? "same-node" : "cross-node";

    void **seg = malloc(sizeof(void *) * n);
    ARMCI_Malloc(seg, (armci_size_t)max_bytes);
    void *local = ARMCI_Malloc_local((armci_size_t)max_bytes);
    void *plain = malloc(max_bytes);
    memset(local, 1, max_bytes);
    memset(plain, 1, max_bytes);
    memset(seg[me], 0, max_bytes);
    ARMCI_Barrier();

    if (me == 0)
        printf("impl,layout,op,bytes,iterations,usec_per_op,MB_per_s\n");
    for (int op = OP_PUT; op <= OP_MEMCPY; op++) {
        for (size_t bytes = 8; bytes <= max_bytes; bytes *= 2) {
            int iters = iterations_for(bytes);
            double t = 0;
            if (me == 0) {
                void *remote = op == OP_MEMCPY ? plain : seg[target];
                run(op, local, remote, bytes, target, iters / 10 + 1); /* warm up */
                t = run(op, local, remote, bytes, target, iters);
                printf("%s,%s,%s,%zu,%d,%.3f,%.1f\n", impl, layout, op_name[op], bytes, iters,
                       t * 1e6, bytes / t / 1e6);
                fflush(stdout);
            }
            ARMCI_Barrier();
        }
    }

    ARMCI_Free_local(local);
    free(plain);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
