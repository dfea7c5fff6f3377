/*
 * GA suite, C: OpenMP threads calling GA at once (MPI_THREAD_MULTIPLE).
 *
 * Inside parallel regions of T threads per process:
 * - every thread of every process owns a band of rows of a 2-D array that
 *   crosses every other process's block; it NGA_Puts a pattern into its band
 *   and NGA_Gets it back (the reads go to the blocks of other processes,
 *   other nodes at np4x2), checked element by element;
 * - every thread NGA_Accs ones (scaled by its thread number + 1) into one
 *   shared array, so every element ends at the same known total;
 * - every thread draws NGA_Read_inc tickets from one counter: each ticket
 *   is drawn exactly once over all threads of all processes.
 * GA_Sync after each region is the only ordering between the threads' writes
 * and the checks that follow: it must cover every thread's operations.
 * GA itself is not built thread safe by Debian; only its blocking one-sided
 * calls, which keep their state on the stack, are used from threads.
 */
#include "gacheck.h"

#include <omp.h>
#include <string.h>

#define THREADS 3
#define BAND    4  /* rows per thread and process */
#define COLS    48 /* crosses every block: the array is distributed by columns too */
#define TICKETS 20 /* per thread */

static double pattern(int row, int col, int round)
{
    return (double)(row * 1000 + col + round * 7);
}

static void bands(int g, int rows)
{
    for (int round = 0; round < 3; round++) {
#pragma omp parallel num_threads(THREADS)
        {
            int t = omp_get_thread_num();
            int first = (gat_me * THREADS + t) * BAND;
            double buf[BAND * COLS], back[BAND * COLS];
            for (int i = 0; i < BAND; i++)
                for (int j = 0; j < COLS; j++)
                    buf[i * COLS + j] = pattern(first + i, j, round);
            int lo[2] = {first, 0}, hi[2] = {first + BAND - 1, COLS - 1}, ld[1] = {COLS};
            NGA_Put(g, lo, hi, buf, ld);
            memset(back, 0, sizeof(back));
            NGA_Get(g, lo, hi, back, ld);
            for (int k = 0; k < BAND * COLS; k++)
                EXPECT(back[k] == buf[k], "thread %d round %d: element %d of its band is %g, not %g",
                       t, round, k, back[k], buf[k]);
        }
        GA_Sync();
        /* Everybody's bands, as written by their threads. */
        double *all = gat_malloc(sizeof(double) * (size_t)rows * COLS);
        int lo[2] = {0, 0}, hi[2] = {rows - 1, COLS - 1}, ld[1] = {COLS};
        NGA_Get(g, lo, hi, all, ld);
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < COLS; j++)
                EXPECT(all[r * COLS + j] == pattern(r, j, round), "round %d: [%d][%d] is %g", round,
                       r, j, all[r * COLS + j]);
        free(all);
        GA_Sync();
    }
}

static void accumulate(int rows)
{
    int dims[2] = {rows, COLS};
    int g = NGA_Create(C_DBL, 2, dims, "threaded acc", NULL);
    GA_Zero(g);
#pragma omp parallel num_threads(THREADS)
    {
        int t = omp_get_thread_num();
        double ones[8 * COLS], scale = (double)(t + 1);
        for (int k = 0; k < 8 * COLS; k++)
            ones[k] = 1.0;
        for (int first = 0; first < rows; first += 8) {
            int last = first + 7 < rows - 1 ? first + 7 : rows - 1;
            int lo[2] = {first, 0}, hi[2] = {last, COLS - 1}, ld[1] = {COLS};
            NGA_Acc(g, lo, hi, ones, ld, &scale);
        }
    }
    GA_Sync();
    double want = (double)gat_nproc * THREADS * (THREADS + 1) / 2;
    double *all = gat_malloc(sizeof(double) * (size_t)rows * COLS);
    int lo[2] = {0, 0}, hi[2] = {rows - 1, COLS - 1}, ld[1] = {COLS};
    NGA_Get(g, lo, hi, all, ld);
    for (int k = 0; k < rows * COLS; k++)
        EXPECT(all[k] == want, "accumulated element %d is %g, not %g", k, all[k], want);
    free(all);
    GA_Destroy(g);
}

static void tickets(void)
{
    int dims[1] = {1};
    int g = NGA_Create(C_LONG, 1, dims, "ticket counter", NULL);
    GA_Zero(g);
    GA_Sync();
    int total = gat_nproc * THREADS * TICKETS;
    int *hist = gat_malloc(sizeof(int) * (size_t)total);
    memset(hist, 0, sizeof(int) * (size_t)total);
#pragma omp parallel num_threads(THREADS)
    {
        int sub[1] = {0};
        for (int k = 0; k < TICKETS; k++) {
            long got = NGA_Read_inc(g, sub, 1);
            if (got >= 0 && got < total)
                __atomic_fetch_add(&hist[got], 1, __ATOMIC_RELAXED);
            else
                EXPECT(0, "ticket %ld out of range", got);
        }
    }
    GA_Igop(hist, total, "+");
    for (int k = 0; k < total; k++)
        EXPECT(hist[k] == 1, "ticket %d drawn %d times", k, hist[k]);
    free(hist);
    GA_Destroy(g);
}

int main(int argc, char **argv)
{
    gat_init_threads(&argc, &argv);
    int rows = gat_nproc * THREADS * BAND;
    int dims[2] = {rows, COLS};
    int g = NGA_Create(C_DBL, 2, dims, "threaded bands", NULL);
    GA_Zero(g);
    bands(g, rows);
    GA_Destroy(g);
    accumulate(rows);
    tickets();
    return gat_finish("c-threads");
}
