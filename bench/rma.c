/*
 * Put/Get/Acc latency and bandwidth between rank 0 and the last rank, 8 B
 * to 4 MiB, plus single-thread memcpy in the same run. Built twice: against
 * ARMCI-ODCM and against ARMCI-MPI (Debian's libarmci-mpi-dev), from this
 * same source, so the two can be compared side by side.
 *
 * Vector rows (putv10, getv10: ARMCI_PutV/GetV of 10 pieces of `bytes` each,
 * spread over the target's segment 512 B or more apart, from and into
 * malloc'd memory) are what GA's NGA_Scatter and NGA_Gather of 10 elements
 * call; they run for 8 B to 1 KiB pieces.
 *
 * Accumulate runs for every ARMCI type, each with a scale other than one
 * (so the kernel multiplies): acc-int, acc-lng, acc-flt, acc-dbl, acc-cpl,
 * acc-dcp; sizes start at one element (16 B for acc-dcp).
 *
 * Output: CSV, one row per (op, size):
 *   impl,layout,op,bytes,iterations,usec_per_op,MB_per_s
 * A blocking op's time includes its share of a final ARMCI_AllFence, so
 * puts are measured to remote completion, not just local.
 * Usage: bench_rma IMPL_NAME [max_bytes] [LAYOUT_LABEL]
 * For slow fabrics (the emulated hosts of tests/multihost): BENCH_OPS=put,get
 * and BENCH_SIZES=8,1048576 keep only those rows, BENCH_MAX_ITERS caps the
 * iterations per row.
 */
#include <armci.h>
#include <mpi.h>

#include "bench_csv.h"
#include "bench_env.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op {
    OP_PUT,
    OP_GET,
    OP_ACC_INT,
    OP_ACC_LNG,
    OP_ACC_FLT,
    OP_ACC_DBL,
    OP_ACC_CPL,
    OP_ACC_DCP,
    OP_MEMCPY,
    OP_PUTV,
    OP_GETV,
};
static const char *op_name[] = {"put",     "get",     "acc-int", "acc-lng", "acc-flt", "acc-dbl",
                                "acc-cpl", "acc-dcp", "memcpy",  "putv10",  "getv10"};

/* The vector rows: pieces per call, the largest piece, and the pieces' spacing at the target. */
#define VEC_PIECES    10
#define VEC_MAX_BYTES 1024
static size_t vec_gap(size_t bytes)
{
    return bytes * 2 > 512 ? bytes * 2 : 512;
}

/* A vector call of VEC_PIECES pieces of `bytes`, packed in `local`, spread at `remote`. */
static void run_vector(bool put, char *local, char *remote, size_t bytes, int target)
{
    void *here[VEC_PIECES], *there[VEC_PIECES];
    for (int k = 0; k < VEC_PIECES; k++) {
        here[k] = local + (size_t)k * bytes;
        there[k] = remote + (size_t)k * vec_gap(bytes);
    }
    armci_giov_t d = {.src_ptr_array = put ? here : there,
                      .dst_ptr_array = put ? there : here,
                      .bytes = (int)bytes,
                      .ptr_array_len = VEC_PIECES};
    if (put)
        ARMCI_PutV(&d, 1, target);
    else
        ARMCI_GetV(&d, 1, target);
}

/* Per accumulate type: ARMCI's type, element size, the scale (real, imaginary). */
static const struct {
    int type;
    size_t elem;
    double re, im;
} acc_kind[] = {
    [OP_ACC_INT] = {ARMCI_ACC_INT, sizeof(int), 3, 0},
    [OP_ACC_LNG] = {ARMCI_ACC_LNG, sizeof(long), 3, 0},
    [OP_ACC_FLT] = {ARMCI_ACC_FLT, sizeof(float), 0.5, 0},
    [OP_ACC_DBL] = {ARMCI_ACC_DBL, sizeof(double), 0.5, 0},
    [OP_ACC_CPL] = {ARMCI_ACC_CPL, 2 * sizeof(float), 0.5, 0.25},
    [OP_ACC_DCP] = {ARMCI_ACC_DCP, 2 * sizeof(double), 0.5, 0.25},
};

static int is_acc(int op)
{
    return op >= OP_ACC_INT && op <= OP_ACC_DCP;
}

/* The scale in the type's own layout (ARMCI reads it through a void *). */
static void make_scale(int op, void *scale)
{
    switch (acc_kind[op].type) {
    case ARMCI_ACC_INT:
        *(int *)scale = (int)acc_kind[op].re;
        break;
    case ARMCI_ACC_LNG:
        *(long *)scale = (long)acc_kind[op].re;
        break;
    case ARMCI_ACC_FLT:
        *(float *)scale = (float)acc_kind[op].re;
        break;
    case ARMCI_ACC_DBL:
        *(double *)scale = acc_kind[op].re;
        break;
    case ARMCI_ACC_CPL:
        ((float *)scale)[0] = (float)acc_kind[op].re;
        ((float *)scale)[1] = (float)acc_kind[op].im;
        break;
    case ARMCI_ACC_DCP:
        ((double *)scale)[0] = acc_kind[op].re;
        ((double *)scale)[1] = acc_kind[op].im;
        break;
    }
}

/* Small values of the type (ones), so that repeated accumulates stay finite and exact. */
static void fill_ones(int op, void *buf, size_t bytes)
{
    size_t i;
    switch (acc_kind[op].type) {
    case ARMCI_ACC_INT:
        for (i = 0; i < bytes / sizeof(int); i++)
            ((int *)buf)[i] = 1;
        break;
    case ARMCI_ACC_LNG:
        for (i = 0; i < bytes / sizeof(long); i++)
            ((long *)buf)[i] = 1;
        break;
    case ARMCI_ACC_FLT:
    case ARMCI_ACC_CPL:
        for (i = 0; i < bytes / sizeof(float); i++)
            ((float *)buf)[i] = 1.0f;
        break;
    case ARMCI_ACC_DBL:
    case ARMCI_ACC_DCP:
        for (i = 0; i < bytes / sizeof(double); i++)
            ((double *)buf)[i] = 1.0;
        break;
    }
}

static int iterations_for(size_t bytes)
{
    size_t budget = 64u << 20; /* ~64 MiB moved per measurement */
    size_t it = budget / (bytes + 64);
    int iters = (int)(it < 20 ? 20 : it > 5000 ? 5000 : it);
    const char *cap = getenv("BENCH_MAX_ITERS");
    if (cap && atoi(cap) > 0 && atoi(cap) < iters)
        iters = atoi(cap);
    return iters;
}

static double run(enum op op, void *local, void *remote, size_t bytes, int target, int iters)
{
    double scale[2] = {0, 0}; /* room for a double complex */
    if (is_acc(op))
        make_scale(op, scale);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case OP_PUT:
            ARMCI_Put(local, remote, (int)bytes, target);
            break;
        case OP_GET:
            ARMCI_Get(remote, local, (int)bytes, target);
            break;
        case OP_MEMCPY:
            memcpy(remote, local, bytes);
            break;
        case OP_PUTV:
        case OP_GETV:
            run_vector(op == OP_PUTV, local, remote, bytes, target);
            break;
        default:
            ARMCI_Acc(acc_kind[op].type, scale, local, remote, (int)bytes, target);
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
        fprintf(bench_csv(), "impl,layout,op,bytes,iterations,usec_per_op,MB_per_s\n");
    for (int op = OP_PUT; op <= OP_GETV; op++) {
        bool vector = op == OP_PUTV || op == OP_GETV;
        size_t first = is_acc(op) && acc_kind[op].elem > 8 ? acc_kind[op].elem : 8;
        if (is_acc(op) && me == 0)
            fill_ones(op, local, max_bytes);
        for (size_t bytes = first; bytes <= max_bytes; bytes *= 2) {
            char size[32];
            snprintf(size, sizeof(size), "%zu", bytes);
            if (!bench_listed("BENCH_OPS", op_name[op]) || !bench_listed("BENCH_SIZES", size))
                continue;
            if (vector && (bytes > VEC_MAX_BYTES || vec_gap(bytes) * VEC_PIECES > max_bytes))
                continue;
            int iters = iterations_for(bytes);
            double t = 0;
            if (me == 0) {
                void *remote = op == OP_MEMCPY ? plain : seg[target];
                void *from = vector ? plain : local; /* GA's gathers: the user's own memory */
                run(op, from, remote, bytes, target, iters / 10 + 1); /* warm up */
                t = run(op, from, remote, bytes, target, iters);
                fprintf(bench_csv(), "%s,%s,%s,%zu,%d,%.3f,%.1f\n", impl, layout, op_name[op],
                        bytes, iters, t * 1e6, bytes / t / 1e6);
                fflush(bench_csv());
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
