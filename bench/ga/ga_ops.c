/*
 * ga_ops: the rates of the small GA operations applications live on, measured
 * the same way over every GA build (bench/ga/run.sh): NGA_Scatter and
 * NGA_Gather of 10 elements to another process's part of a 1-D array of
 * doubles, and NGA_Read_inc on one task counter that process 0 holds.
 *
 * Every process works at once; the partner of process p is p + n/2 (mod n), so
 * with two nodes of n/2 ranks each the traffic crosses nodes. Each row is the
 * slowest process's time per call.
 *
 * Output CSV: impl,op,elements,iterations,usec_per_op,ops_per_s
 * Usage: ga_ops IMPL_NAME [iterations]
 */
#include <ga.h>
#include <macdecls.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { PER_PROC = 1024, ELEMENTS = 10 };

static double slowest(double seconds)
{
    GA_Dgop(&seconds, 1, "max");
    return seconds;
}

static void row(const char *impl, const char *op, int elements, int iters, double seconds)
{
    if (GA_Nodeid() == 0) {
        double t = seconds / iters;
        printf("%s,%s,%d,%d,%.3f,%.0f\n", impl, op, elements, iters, t * 1e6, 1 / t);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    GA_Initialize();
    MA_init(C_DBL, 1 << 20, 1 << 20);
    const char *impl = argc > 1 ? argv[1] : "ga";
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    int me = GA_Nodeid(), n = GA_Nnodes();

    int dims = PER_PROC * n, one = 1;
    int g_a = NGA_Create(C_DBL, 1, &dims, "ga_ops array", NULL);
    int g_counter = NGA_Create(C_LONG, 1, &one, "ga_ops counter", NULL);
    GA_Zero(g_a);
    GA_Zero(g_counter);

    /* Ten elements spread over the partner's part of the array. */
    int partner = (me + n / 2) % n, lo, hi;
    NGA_Distribution(g_a, partner, &lo, &hi);
    int subs[ELEMENTS], *subs_of[ELEMENTS];
    double values[ELEMENTS];
    for (int k = 0; k < ELEMENTS; k++) {
        subs[k] = lo + (int)((long)(hi - lo + 1) * k / ELEMENTS);
        subs_of[k] = &subs[k];
        values[k] = me + k;
    }
    if (me == 0)
        printf("impl,op,elements,iterations,usec_per_op,ops_per_s\n");

    GA_Sync();
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        NGA_Scatter(g_a, values, subs_of, ELEMENTS);
    row(impl, "scatter", ELEMENTS, iters, slowest(MPI_Wtime() - t0));

    GA_Sync();
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        NGA_Gather(g_a, values, subs_of, ELEMENTS);
    row(impl, "gather", ELEMENTS, iters, slowest(MPI_Wtime() - t0));

    GA_Sync();
    int zero = 0;
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        NGA_Read_inc(g_counter, &zero, 1);
    row(impl, "read_inc", 1, iters, slowest(MPI_Wtime() - t0));

    /* Every increment counted once: a benchmark of a broken counter is no benchmark. */
    GA_Sync();
    long total = 0;
    NGA_Get(g_counter, &zero, &zero, &total, &one);
    int failed = total != (long)iters * n;
    if (failed && me == 0)
        fprintf(stderr, "ga_ops: the counter reads %ld, expected %ld\n", total, (long)iters * n);

    GA_Destroy(g_counter);
    GA_Destroy(g_a);
    GA_Terminate();
    MPI_Finalize();
    return failed;
}
