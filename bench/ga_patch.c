/*
 * Global Arrays' own shapes: what GA's perf.x does when it moves a 2-D patch
 * of doubles between a local array and another process's block of a global
 * array. GA calls ARMCI_GetS/PutS/AccS with one stride level: count[0] a
 * column's bytes, the remote stride the target block's leading dimension,
 * the local side the user's own array (memory ARMCI never registered; here
 * malloc'd, packed with leading dimension = rows, as perf.x's buffer is).
 *
 * Each shape runs with the local array from malloc ("malloc", 4 KiB pages
 * where transparent huge pages are madvise-only), from malloc'd memory
 * aligned to 2 MiB and madvised to huge pages ("malloc-huge", as
 * ARMCI_Malloc_local's is: softib's cost is per page), and from
 * ARMCI_Malloc_local ("registered"), and a contiguous put of the same bytes
 * from registered memory in the same run ("put-contig"), the figure the
 * patch rows are held to. Rank 0 moves patches to or from the last rank; every
 * other rank waits in ARMCI_Barrier (as GA's idle processes wait in
 * GA_Sync), so 4 ranks on 2 virtual nodes reproduce perf.x's load. Each
 * figure is the median of 5 timed loops.
 *
 * Output CSV: impl,layout,variant,local,op,rows,cols,bytes,usec_per_op,MB_per_s
 * Usage: bench_ga_patch IMPL LAYOUT VARIANT
 * BENCH_CASES=LOCAL,OP,ROWS,COLS (a prefix, e.g. "malloc,get"; several separated by ';')
 * keeps only the matching rows (for profiling one case, or a short run between hosts).
 */
#include <armci.h>
#include <mpi.h>

#include <sys/mman.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_csv.h"
#include "patch_loop.h"

#define LOOPS       5          /* each figure is the median of this many timed loops */
#define REMOTE_LD   2048       /* rows of the target's block: its leading dimension */
#define REMOTE_COLS 512        /* columns of the target's block */
#define LOOP_BYTES  (16 << 20) /* bytes moved per timed loop, about */

/* Patches of doubles, rows x cols: 2 KiB, 64 KiB, and 2 MiB twice (square, and tall as a
 * column block of a 1024-row array). */
static const struct {
    int rows, cols;
} shapes[] = {{16, 16}, {128, 64}, {512, 512}, {1024, 256}};

enum op { OP_GET, OP_PUT, OP_ACC, OP_CONTIG };
static const char *op_name[] = {"get", "put", "acc", "put-contig"};

static double run(enum op op, double *local, double *remote, int rows, int cols, int target,
                  int iters)
{
    static const enum patch_op as_patch[] = {PATCH_GET, PATCH_PUT, PATCH_ACC, PATCH_CONTIG_PUT};
    return patch_loop(as_patch[op], local, remote, rows, cols, REMOTE_LD, target, iters);
}

/* Whether `name` starts with one of the ';'-separated prefixes of `list`. */
static bool listed_case(const char *list, const char *name)
{
    for (const char *p = list;; p++) {
        size_t n = strcspn(p, ";");
        if (n && !strncmp(name, p, n))
            return true;
        p += n;
        if (!*p)
            return false;
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_time(enum op op, double *local, double *remote, int rows, int cols, int target)
{
    size_t bytes = (size_t)rows * cols * sizeof(double);
    long it = LOOP_BYTES / (long)(bytes + 256);
    int iters = (int)(it < 8 ? 8 : it > 4000 ? 4000 : it);
    double t[LOOPS];
    run(op, local, remote, rows, cols, target, iters / 10 + 1); /* warm up */
    for (int i = 0; i < LOOPS; i++)
        t[i] = run(op, local, remote, rows, cols, target, iters);
    qsort(t, LOOPS, sizeof(double), by_value);
    return t[LOOPS / 2];
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
    int target = np - 1;
    const char *only = getenv("BENCH_CASES");
    size_t remote_bytes = (size_t)REMOTE_LD * REMOTE_COLS * sizeof(double);
    size_t local_bytes = 0;
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        size_t b = (size_t)shapes[s].rows * shapes[s].cols * sizeof(double);
        local_bytes = b > local_bytes ? b : local_bytes;
    }

    void **seg = malloc(sizeof(void *) * np);
    ARMCI_Malloc(seg, (armci_size_t)remote_bytes);
    memset(seg[me], 0, remote_bytes);
    enum { KINDS = 3 };
    void *huge = NULL;
    size_t huge_bytes = (local_bytes + (2 << 20) - 1) & ~(size_t)((2 << 20) - 1);
    if (posix_memalign(&huge, 2 << 20, huge_bytes)) {
        fprintf(stderr, "bench_ga_patch: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    madvise(huge, huge_bytes, MADV_HUGEPAGE); /* a hint: where it is refused, 4 KiB pages */
    double *kinds[KINDS] = {malloc(local_bytes), huge,
                            ARMCI_Malloc_local((armci_size_t)local_bytes)};
    const char *kind_name[KINDS] = {"malloc", "malloc-huge", "registered"};
    for (int k = 0; k < KINDS; k++)
        for (size_t i = 0; i < local_bytes / sizeof(double); i++)
            kinds[k][i] = 0.01;
    ARMCI_Barrier();

    if (me == 0)
        fprintf(bench_csv(), "impl,layout,variant,local,op,rows,cols,bytes,usec_per_op,MB_per_s\n");
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int rows = shapes[s].rows, cols = shapes[s].cols;
        size_t bytes = (size_t)rows * cols * sizeof(double);
        for (int op = OP_GET; op <= OP_CONTIG; op++) {
            for (int k = 0; k < KINDS; k++) {
                if (op == OP_CONTIG && k != KINDS - 1)
                    continue; /* the reference: registered memory only */
                char name[64];
                snprintf(name, sizeof(name), "%s,%s,%d,%d", kind_name[k], op_name[op], rows, cols);
                if (only && !listed_case(only, name))
                    continue;
                if (me == 0) {
                    double t = median_time(op, kinds[k], seg[target], rows, cols, target);
                    fprintf(bench_csv(), "%s,%s,%s,%s,%s,%d,%d,%zu,%.3f,%.1f\n", impl, layout,
                            variant, kind_name[k], op_name[op], rows, cols, bytes, t * 1e6,
                            bytes / t / 1e6);
                    fflush(bench_csv());
                }
                ARMCI_Barrier();
            }
        }
    }
    free(kinds[0]);
    free(kinds[1]);
    ARMCI_Free_local(kinds[2]);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
