/*
 * Message rate: 8-byte puts, gets and accumulates (double, scale 0.5) per
 * second from rank 0 to the last rank, with 1, 2, 4 ... 64 operations
 * outstanding. Each operation is non-blocking (ARMCI_NbPut, ARMCI_NbGet,
 * ARMCI_NbAcc) with its own handle in a window of W handles; when the window
 * is full, the oldest is waited for before its handle is reused. Operation i
 * uses the 8-byte slot i mod W, so no two outstanding operations overlap.
 * The timing ends after the last wait and an ARMCI_AllFence. Built against
 * ARMCI-ODCM and ARMCI-MPI from this same source, like rma.c.
 *
 * Output CSV: impl,layout,op,bytes,outstanding,iterations,usec_per_op,ops_per_s
 * Usage: bench_rate IMPL_NAME [LAYOUT_LABEL] [max_outstanding] [iterations]
 */
#include <armci.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES 8

enum op { OP_PUT, OP_GET, OP_ACC };
static const char *op_name[] = {"put", "get", "acc"};

static double run(enum op op, double *local, char *remote, int window, armci_hdl_t *hdl,
                  int target, int iters)
{
    double scale = 0.5;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        int slot = i % window;
        if (i >= window)
            ARMCI_Wait(&hdl[slot]); /* the oldest outstanding operation */
        ARMCI_INIT_HANDLE(&hdl[slot]);
        char *dst = remote + (size_t)slot * BYTES;
        switch (op) {
        case OP_PUT:
            ARMCI_NbPut(&local[slot], dst, BYTES, target, &hdl[slot]);
            break;
        case OP_GET:
            ARMCI_NbGet(dst, &local[slot], BYTES, target, &hdl[slot]);
            break;
        case OP_ACC:
            ARMCI_NbAcc(ARMCI_ACC_DBL, &scale, &local[slot], dst, BYTES, target, &hdl[slot]);
            break;
        }
    }
    int pending = iters < window ? iters : window;
    for (int k = 0; k < pending; k++)
        ARMCI_Wait(&hdl[(iters - pending + k) % window]);
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
    int target = n - 1;
    const char *impl = argc > 1 ? argv[1] : "armci";
    const char *layout = argc > 2 ? argv[2] : ARMCI_Same_node(target) ? "same-node" : "cross-node";
    int max_window = argc > 3 ? atoi(argv[3]) : 64;
    int iters = argc > 4 ? atoi(argv[4]) : 20000;
    if (max_window < 1)
        max_window = 1;

    void **seg = malloc(sizeof(void *) * n);
    ARMCI_Malloc(seg, (armci_size_t)max_window * BYTES);
    double *local = ARMCI_Malloc_local((armci_size_t)max_window * BYTES);
    armci_hdl_t *hdl = calloc((size_t)max_window, sizeof(armci_hdl_t));
    for (int i = 0; i < max_window; i++)
        local[i] = 1.0;
    memset(seg[me], 0, (size_t)max_window * BYTES);
    ARMCI_Barrier();

    if (me == 0)
        printf("impl,layout,op,bytes,outstanding,iterations,usec_per_op,ops_per_s\n");
    for (int op = OP_PUT; op <= OP_ACC; op++) {
        for (int w = 1; w <= max_window; w *= 2) {
            if (me == 0) {
                run(op, local, seg[target], w, hdl, target, iters / 10 + 1); /* warm up */
                double t = run(op, local, seg[target], w, hdl, target, iters);
                printf("%s,%s,%s,%d,%d,%d,%.3f,%.0f\n", impl, layout, op_name[op], BYTES, w, iters,
                       t * 1e6, 1 / t);
                fflush(stdout);
            }
            ARMCI_Barrier();
        }
    }

    free(hdl);
    ARMCI_Free_local(local);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
