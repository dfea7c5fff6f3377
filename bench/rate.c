/*
 * Message rate: 8-byte puts, gets and accumulates (double, scale 0.5) per
 * second from rank 0 to the last rank, with 1, 2, 4 ... 256 operations
 * outstanding. Each operation is non-blocking (ARMCI_NbPut, ARMCI_NbGet,
 * ARMCI_NbAcc) with its own handle in a window of W handles; when the window
 * is full, the oldest is waited for before its handle is reused. Operation i
 * uses the 8-byte slot i mod W, so no two outstanding operations overlap.
 * The timing ends after the last wait and an ARMCI_AllFence. Built against
 * ARMCI-ODCM and ARMCI-MPI from this same source, like rma.c.
 *
 * Then, one call at a time: ARMCI_PutV and ARMCI_AccV of 1024 pieces of 8 B
 * (op putv-1024x8, accv-1024x8) beside a contiguous put and acc of the same
 * 8 KiB (put-8k, acc-8k), and ARMCI_Rmw fetch-and-add on a long and on an int
 * and swap on a long (rmw-fadd-long, rmw-fadd-int, rmw-swap-long), and the
 * same on rank 0's own memory (rmw-*-own): their ops_per_s is calls per
 * second; a blocking Rmw's usec_per_op is its latency.
 *
 * Output CSV: impl,layout,op,bytes,outstanding,iterations,usec_per_op,ops_per_s
 * Usage: bench_rate IMPL_NAME [LAYOUT_LABEL] [max_outstanding] [iterations]
 * For profiling one row: BENCH_OPS=put,get,acc,vector,rmw and BENCH_WINDOWS=64
 * keep only those rows (comma-separated; unset: all).
 */
#include <armci.h>
#include <mpi.h>

#include "bench_csv.h"
#include "bench_env.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES 8

enum op { OP_PUT, OP_GET, OP_ACC };
enum { VEC_PIECES = 1024 };
static const char *op_name[] = {"put", "get", "acc"};

static double run(enum op op, double *local, char *remote, int window, armci_hdl_t *hdl, int target,
                  int iters)
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

static void print_row(const char *impl, const char *layout, const char *op, int bytes,
                      int outstanding, int iters, double t)
{
    fprintf(bench_csv(), "%s,%s,%s,%d,%d,%d,%.3f,%.0f\n", impl, layout, op, bytes, outstanding,
            iters, t * 1e6, 1 / t);
    fflush(bench_csv());
}

/* One ARMCI_PutV or ARMCI_AccV of VEC_PIECES pieces of BYTES each, blocking: seconds per call. */
static double run_vector(bool acc, double *local, char *remote, int target, int iters)
{
    static void *src[VEC_PIECES], *dst[VEC_PIECES];
    double scale = 0.5;
    for (int k = 0; k < VEC_PIECES; k++) {
        src[k] = &local[k];
        dst[k] = remote + (size_t)k * BYTES;
    }
    armci_giov_t desc = {
        .src_ptr_array = src, .dst_ptr_array = dst, .bytes = BYTES, .ptr_array_len = VEC_PIECES};
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (acc)
            ARMCI_AccV(ARMCI_ACC_DBL, &scale, &desc, 1, target);
        else
            ARMCI_PutV(&desc, 1, target);
    }
    ARMCI_Fence(target);
    return (MPI_Wtime() - t0) / iters;
}

/* The same bytes as run_vector in one contiguous put or accumulate: seconds per call. */
static double run_contig(bool acc, double *local, char *remote, int target, int iters)
{
    double scale = 0.5;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (acc)
            ARMCI_Acc(ARMCI_ACC_DBL, &scale, local, remote, VEC_PIECES * BYTES, target);
        else
            ARMCI_Put(local, remote, VEC_PIECES * BYTES, target);
    }
    ARMCI_Fence(target);
    return (MPI_Wtime() - t0) / iters;
}

/* Blocking ARMCI_Rmw calls on one remote word: seconds per call. */
static double run_rmw(int op, void *remote, int target, int iters)
{
    long lv = 1;
    int iv = 1;
    bool is_int = op == ARMCI_FETCH_AND_ADD || op == ARMCI_SWAP;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        ARMCI_Rmw(op, is_int ? (void *)&iv : (void *)&lv, remote, 1, target);
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
    int max_window = argc > 3 ? atoi(argv[3]) : 256;
    int iters = argc > 4 ? atoi(argv[4]) : 20000;
    if (max_window < 1)
        max_window = 1;

    /* Room for the window's slots, or for the vector benchmark's pieces if that is more. */
    int slots = max_window > VEC_PIECES ? max_window : VEC_PIECES;
    void **seg = malloc(sizeof(void *) * n);
    ARMCI_Malloc(seg, (armci_size_t)slots * BYTES);
    double *local = ARMCI_Malloc_local((armci_size_t)slots * BYTES);
    armci_hdl_t *hdl = calloc((size_t)max_window, sizeof(armci_hdl_t));
    for (int i = 0; i < slots; i++)
        local[i] = 1.0;
    memset(seg[me], 0, (size_t)slots * BYTES);
    ARMCI_Barrier();

    if (me == 0)
        fprintf(bench_csv(), "impl,layout,op,bytes,outstanding,iterations,usec_per_op,ops_per_s\n");
    for (int op = OP_PUT; op <= OP_ACC; op++) {
        for (int w = 1; w <= max_window; w *= 2) {
            char window[16];
            snprintf(window, sizeof window, "%d", w);
            if (me == 0 && bench_listed("BENCH_OPS", op_name[op]) && bench_listed("BENCH_WINDOWS", window)) {
                run(op, local, seg[target], w, hdl, target, iters / 10 + 1); /* warm up */
                double t = run(op, local, seg[target], w, hdl, target, iters);
                print_row(impl, layout, op_name[op], BYTES, w, iters, t);
            }
            ARMCI_Barrier();
        }
    }

    int vec_iters = iters / 100 + 1;
    for (int acc = 0; acc <= 1 && me == 0 && bench_listed("BENCH_OPS", "vector"); acc++) {
        run_vector(acc, local, seg[target], target, vec_iters / 10 + 1);
        double t = run_vector(acc, local, seg[target], target, vec_iters);
        print_row(impl, layout, acc ? "accv-1024x8" : "putv-1024x8", VEC_PIECES * BYTES, 1,
                  vec_iters, t);
        run_contig(acc, local, seg[target], target, vec_iters / 10 + 1);
        t = run_contig(acc, local, seg[target], target, vec_iters);
        print_row(impl, layout, acc ? "acc-8k" : "put-8k", VEC_PIECES * BYTES, 1, vec_iters, t);
    }
    ARMCI_Barrier();

    static const struct {
        int op;
        const char *name;
        int bytes;
    } rmws[] = {{ARMCI_FETCH_AND_ADD_LONG, "rmw-fadd-long", sizeof(long)},
                {ARMCI_FETCH_AND_ADD, "rmw-fadd-int", sizeof(int)},
                {ARMCI_SWAP_LONG, "rmw-swap-long", sizeof(long)}};
    bool rmw = bench_listed("BENCH_OPS", "rmw");
    for (size_t k = 0; k < sizeof rmws / sizeof rmws[0] && me == 0 && rmw; k++) {
        run_rmw(rmws[k].op, seg[target], target, iters / 10 + 1);
        double t = run_rmw(rmws[k].op, seg[target], target, iters);
        print_row(impl, layout, rmws[k].name, rmws[k].bytes, 1, iters, t);
    }
    /* The same on rank 0's own memory: what a counter on the caller's own node costs (device
     * atomics over a loopback connection when they are not atomic against the CPU's). */
    for (size_t k = 0; k < sizeof rmws / sizeof rmws[0] && me == 0 && rmw; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s-own", rmws[k].name);
        run_rmw(rmws[k].op, seg[0], 0, iters / 10 + 1);
        double t = run_rmw(rmws[k].op, seg[0], 0, iters);
        print_row(impl, layout, name, rmws[k].bytes, 1, iters, t);
    }
    ARMCI_Barrier();

    free(hdl);
    ARMCI_Free_local(local);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
