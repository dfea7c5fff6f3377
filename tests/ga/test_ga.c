/*
 * A real Global Arrays program, linked against Debian's libga-openmpi.a (built
 * against ARMCI-MPI's armci.h) and against our libarmci instead of ARMCI-MPI.
 * That it runs and gets every answer right is the ABI claim of DESIGN.md §2.
 *
 * It uses GA the way applications do: 2-D double arrays written and read by
 * patches (NGA_Put/NGA_Get, also patches that straddle owners), NGA_Acc from
 * every process, GA_Dgemm and GA_Ddot, NGA_Read_inc on a shared int counter,
 * GA_Sync between phases. All values are small integers, so every expected
 * result is exact in double arithmetic and checked for equality.
 *
 * Usage: test_ga [N]   (arrays N x N and N x N+3; default 48)
 */
#include <ga.h>
#include <macdecls.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INCREMENTS 50 /* NGA_Read_inc calls per process */

static int me, nproc;
static int failures; /* checks that failed on this process */

/* Reports a failed check on this process; the result is combined at the end. */
#define EXPECT(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "FAIL rank %d %s:%d: ", me, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* Element (i, j) of the test matrix: small integers of both signs. */
static double a_value(int i, int j)
{
    return (double)((3 * i + 7 * j) % 11 - 5);
}

static double b_value(int i, int j)
{
    return (double)((5 * i + 2 * j) % 7 - 3);
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL)
        GA_Error("test_ga: out of memory", (int)bytes);
    return p;
}

/* Rows [lo, hi) of an nrows x ncols array owned, by row bands, by this process. */
static void my_band(int nrows, int *lo, int *hi)
{
    *lo = (int)((long)nrows * me / nproc);
    *hi = (int)((long)nrows * (me + 1) / nproc);
}

/* Each process writes its own band of rows: the writes cross GA's own distribution. */
static void put_by_bands(int g, int nrows, int ncols, double (*value)(int, int))
{
    int first, end;
    my_band(nrows, &first, &end);
    if (first == end)
        return;
    double *buf = xmalloc(sizeof(double) * (size_t)(end - first) * ncols);
    for (int i = first; i < end; i++)
        for (int j = 0; j < ncols; j++)
            buf[(size_t)(i - first) * ncols + j] = value(i, j);
    int lo[2] = {first, 0}, hi[2] = {end - 1, ncols - 1}, ld[1] = {ncols};
    NGA_Put(g, lo, hi, buf, ld);
    free(buf);
}

/* Reads rows [r0, r1] x columns [c0, c1] and compares with scale * value(i, j). */
static void check_patch(int g, int r0, int r1, int c0, int c1, double scale,
                        double (*value)(int, int), const char *what)
{
    int w = c1 - c0 + 1, ldb = w + 2; /* a padded leading dimension, as apps use */
    double *buf = xmalloc(sizeof(double) * (size_t)(r1 - r0 + 1) * ldb);
    int lo[2] = {r0, c0}, hi[2] = {r1, c1}, ld[1] = {ldb};
    NGA_Get(g, lo, hi, buf, ld);
    int wrong = 0;
    for (int i = r0; i <= r1; i++)
        for (int j = c0; j <= c1; j++) {
            double got = buf[(size_t)(i - r0) * ldb + (j - c0)];
            /* report the first wrong element only, count them all */
            EXPECT(got == scale * value(i, j) || wrong++ > 0, "%s: (%d,%d) = %g, expected %g", what,
                   i, j, got, scale * value(i, j));
        }
    EXPECT(wrong <= 1, "%s: %d wrong elements in all", what, wrong);
    free(buf);
}

static void test_put_get(int g, int n, int m)
{
    put_by_bands(g, n, m, a_value);
    GA_Sync();
    check_patch(g, 0, n - 1, 0, m - 1, 1.0, a_value, "put/get whole array");
    /* a patch that starts and ends inside other processes' blocks */
    check_patch(g, n / 3, n - 2, 1, m - 3, 1.0, a_value, "put/get inner patch");
    GA_Sync();
}

/* Every process adds (rank + 1) * A to B: B = A * nproc (nproc + 1) / 2. */
static void test_acc(int g_b, int n, int m)
{
    GA_Zero(g_b);
    double *buf = xmalloc(sizeof(double) * (size_t)n * m);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            buf[(size_t)i * m + j] = a_value(i, j);
    double alpha = me + 1;
    int lo[2] = {0, 0}, hi[2] = {n - 1, m - 1}, ld[1] = {m};
    NGA_Acc(g_b, lo, hi, buf, ld, &alpha);
    free(buf);
    GA_Sync();
    check_patch(g_b, 0, n - 1, 0, m - 1, nproc * (nproc + 1) / 2.0, a_value, "acc");
    GA_Sync();
}

/* Element (i, j) of A(n x k) * B(k x m), computed directly. */
static double product_value(int i, int j, int k)
{
    double sum = 0.0;
    for (int l = 0; l < k; l++)
        sum += a_value(i, l) * b_value(l, j);
    return sum;
}

static int dgemm_k; /* inner dimension for product_entry, a check_patch value function */

static double product_entry(int i, int j)
{
    return product_value(i, j, dgemm_k);
}

/* C = A B with A n x k and B k x m; every process checks a different band of C. */
static void test_dgemm(int n, int k, int m)
{
    int da[2] = {n, k}, db[2] = {k, m}, dc[2] = {n, m};
    int g_a = NGA_Create(C_DBL, 2, da, "dgemm A", NULL);
    int g_b = NGA_Create(C_DBL, 2, db, "dgemm B", NULL);
    int g_c = NGA_Create(C_DBL, 2, dc, "dgemm C", NULL);
    put_by_bands(g_a, n, k, a_value);
    put_by_bands(g_b, k, m, b_value);
    GA_Zero(g_c);
    GA_Sync();
    GA_Dgemm('N', 'N', n, m, k, 1.0, g_a, g_b, 0.0, g_c);
    dgemm_k = k;
    int first, end;
    my_band(n, &first, &end);
    if (first < end)
        check_patch(g_c, first, end - 1, 0, m - 1, 1.0, product_entry, "dgemm");
    GA_Sync();
    GA_Destroy(g_c);
    GA_Destroy(g_b);
    GA_Destroy(g_a);
}

static void test_ddot(int g_a, int n, int m)
{
    double expected = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            expected += a_value(i, j) * a_value(i, j);
    double got = GA_Ddot(g_a, g_a);
    EXPECT(got == expected, "ddot = %g, expected %g", got, expected);
}

/*
 * Every process draws INCREMENTS tickets from one shared counter; each ticket
 * is marked in a histogram with an int NGA_Acc. Atomic fetch-and-add means
 * every ticket 0 .. nproc*INCREMENTS-1 is drawn exactly once.
 */
static void test_read_inc(void)
{
    int one_elem[1] = {1}, tickets = nproc * INCREMENTS, hdims[1] = {tickets};
    int g_cnt = NGA_Create(C_INT, 1, one_elem, "counter", NULL);
    int g_hist = NGA_Create(C_INT, 1, hdims, "tickets", NULL);
    GA_Zero(g_cnt);
    GA_Zero(g_hist);
    GA_Sync();
    int zero[1] = {0}, one = 1;
    for (int r = 0; r < INCREMENTS; r++) {
        long t = NGA_Read_inc(g_cnt, zero, 1);
        EXPECT(t >= 0 && t < tickets, "ticket %ld out of range", t);
        int idx[1] = {(int)t};
        if (t >= 0 && t < tickets)
            NGA_Acc(g_hist, idx, idx, &one, one_elem, &one);
    }
    GA_Sync();
    int *hist = xmalloc(sizeof(int) * (size_t)tickets);
    int lo[1] = {0}, hi[1] = {tickets - 1}, final_count;
    NGA_Get(g_hist, lo, hi, hist, one_elem);
    NGA_Get(g_cnt, zero, zero, &final_count, one_elem);
    EXPECT(final_count == tickets, "counter = %d, expected %d", final_count, tickets);
    for (int t = 0; t < tickets; t++)
        EXPECT(hist[t] == 1, "ticket %d drawn %d times", t, hist[t]);
    free(hist);
    GA_Sync();
    GA_Destroy(g_hist);
    GA_Destroy(g_cnt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    GA_Initialize();
    me = GA_Nodeid();
    nproc = GA_Nnodes();
    if (!MA_init(C_DBL, 1 << 16, 1 << 20))
        GA_Error("test_ga: MA_init failed", 0);

    int n = argc > 1 ? atoi(argv[1]) : 48;
    if (n < 4)
        GA_Error("test_ga: N must be at least 4", n);
    int m = n + 3; /* not square, so swapped dimensions cannot pass */
    int dims[2] = {n, m};
    int g_a = NGA_Create(C_DBL, 2, dims, "A", NULL);
    int g_b = NGA_Create(C_DBL, 2, dims, "B", NULL);

    test_put_get(g_a, n, m);
    test_acc(g_b, n, m);
    test_ddot(g_a, n, m);
    test_dgemm(n, m, n - 1);
    test_read_inc();

    GA_Destroy(g_b);
    GA_Destroy(g_a);
    GA_Igop(&failures, 1, "+");
    if (me == 0)
        printf("%s test_ga: %d processes, N=%d, %d failed checks\n", failures ? "FAIL" : "PASS",
               nproc, n, failures);
    GA_Terminate();
    MPI_Finalize();
    return failures ? 1 : 0;
}
