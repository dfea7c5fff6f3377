/*
 * Strided bandwidth as in the ODCM paper's Figs. 8-10: square N x N patches
 * of doubles, N = 4 ... max_n (default 1024), out of a larger remote matrix
 * (leading dimension LD = 2 x max_n, so even the largest patch is strided),
 * PutS/GetS/AccS from rank 0 to the last rank, plus a contiguous Put of the
 * same bytes in the same run for the ratio. The local side is a packed
 * N x N patch. Each figure is the best of three timed loops (the paths are
 * compared shape by shape, and a lone slow loop on a shared core would
 * otherwise decide). Built against ARMCI-ODCM and ARMCI-MPI.
 *
 * Output CSV: impl,layout,variant,op,n,bytes,usec_per_op,MB_per_s
 * Usage: bench_strided IMPL LAYOUT VARIANT [max_n]
 */
#include <armci.h>
#include <mpi.h>

#include "bench_csv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patch_loop.h"

#define REPEATS 3 /* each figure is the best of this many timed loops */

/* In patch_loop's order. */
enum op {
    OP_PUTS = PATCH_PUT,
    OP_GETS = PATCH_GET,
    OP_ACCS = PATCH_ACC,
    OP_PUT_CONTIG = PATCH_CONTIG_PUT
};
static const char *names[] = {"puts", "gets", "accs", "put-contig"};

static double run(enum op op, double *local, double *remote, int n, int ld, int target, int iters)
{
    return patch_loop((enum patch_op)op, local, remote, n, n, ld, target, iters);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *impl = argc > 1 ? argv[1] : "armci";
    const char *layout = argc > 2 ? argv[2] : "?";
    const char *variant = argc > 3 ? argv[3] : "default";
    int max_n = argc > 4 ? atoi(argv[4]) : 1024;
    if (max_n < 4)
        max_n = 4;
    int ld = 2 * max_n;
    int target = np - 1;
    size_t remote_bytes = (size_t)ld * ld * sizeof(double);
    size_t local_bytes = (size_t)max_n * max_n * sizeof(double);

    void **seg = malloc(sizeof(void *) * np);
    ARMCI_Malloc(seg, (armci_size_t)remote_bytes);
    double *local = ARMCI_Malloc_local((armci_size_t)local_bytes);
    memset(local, 0, local_bytes);
    memset(seg[me], 0, remote_bytes);
    ARMCI_Barrier();

    if (me == 0)
        fprintf(bench_csv(), "impl,layout,variant,op,n,bytes,usec_per_op,MB_per_s\n");
    for (int op = OP_PUTS; op <= OP_PUT_CONTIG; op++) {
        for (int n = 4; n <= max_n; n *= 2) {
            size_t bytes = (size_t)n * n * sizeof(double);
            long it = (32L << 20) / (long)(bytes + 256);
            int iters = (int)(it < 10 ? 10 : it > 2000 ? 2000 : it);
            if (me == 0) {
                run(op, local, seg[target], n, ld, target, iters / 10 + 1);
                double t = run(op, local, seg[target], n, ld, target, iters);
                for (int rep = 1; rep < REPEATS; rep++) {
                    double again = run(op, local, seg[target], n, ld, target, iters);
                    t = again < t ? again : t;
                }
                fprintf(bench_csv(), "%s,%s,%s,%s,%d,%zu,%.3f,%.1f\n", impl, layout, variant,
                        names[op], n, bytes, t * 1e6, bytes / t / 1e6);
                fflush(bench_csv());
            }
            ARMCI_Barrier();
        }
    }
    ARMCI_Free_local(local);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
