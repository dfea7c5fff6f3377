/*
 * The timed loop of the strided benchmarks (strided.c, ga_patch.c): ITERS
 * transfers of one ROWS x COLS patch of doubles, a column per chunk, between
 * a local array of leading dimension ROWS and a remote one of REMOTE_LD,
 * with the fence inside the timing. Returns seconds per transfer.
 */
#ifndef ARMCI_BENCH_PATCH_LOOP_H
#define ARMCI_BENCH_PATCH_LOOP_H

#include <armci.h>
#include <mpi.h>

enum patch_op { PATCH_PUT, PATCH_GET, PATCH_ACC, PATCH_CONTIG_PUT };

static inline double patch_loop(enum patch_op op, double *local, double *remote, int rows, int cols,
                                int remote_ld, int target, int iters)
{
    int count[2] = {rows * (int)sizeof(double), cols};
    int rstride[1] = {remote_ld * (int)sizeof(double)}, lstride[1] = {rows * (int)sizeof(double)};
    double one = 1.0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case PATCH_PUT:
            ARMCI_PutS(local, lstride, remote, rstride, count, 1, target);
            break;
        case PATCH_GET:
            ARMCI_GetS(remote, rstride, local, lstride, count, 1, target);
            break;
        case PATCH_ACC:
            ARMCI_AccS(ARMCI_ACC_DBL, &one, local, lstride, remote, rstride, count, 1, target);
            break;
        case PATCH_CONTIG_PUT: /* the same bytes in one piece, for scale */
            ARMCI_Put(local, remote, rows * cols * (int)sizeof(double), target);
            break;
        }
    }
    ARMCI_AllFence();
    return (MPI_Wtime() - t0) / iters;
}

#endif
