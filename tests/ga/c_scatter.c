/*
 * GA suite, C: scatter, gather and scatter-accumulate.
 *
 * On a 2-D array (double, int and double complex) every process scatters
 * its own share of a fixed permutation of all elements (NGA_Scatter with
 * an array of subscript pointers, NGA_Scatter_flat with a flat subscript
 * array), so the elements of each process land all over the array and on
 * every owner; NGA_Gather/NGA_Gather_flat read back an unrelated
 * permutation. NGA_Scatter_acc / NGA_Scatter_acc_flat from all processes
 * hit overlapping elements, some several times in one call, and the sums
 * must be exact. GA turns these into ARMCI vector operations
 * (ARMCI_PutV/GetV/AccV), one descriptor per element.
 */
#include "gacheck.h"

#define N  17
#define M  11
#define NE (N * M)

/* The k-th element of a permutation of 0..NE-1 (NE and step coprime). */
static int perm(int k, int step, int offset)
{
    return (int)(((long)k * step + offset) % NE);
}

static double dval(int e)
{
    return (double)(e % 23 - 11);
}

static void subs_of(int e, int *s)
{
    s[0] = e / M;
    s[1] = e % M;
}

static void test_double(void)
{
    int dims[2] = {N, M};
    int g = NGA_Create(C_DBL, 2, dims, "scatter double", NULL);
    GA_Zero(g);
    GA_Sync();
    /* my share of permutation 1: k = me, me + nproc, ... */
    int cnt = 0;
    for (int k = gat_me; k < NE; k += gat_nproc)
        cnt++;
    int *flat = gat_malloc(sizeof(int) * 2 * (size_t)(cnt + 1));
    int **ptrs = gat_malloc(sizeof(int *) * (size_t)(cnt + 1));
    double *v = gat_malloc(sizeof(double) * (size_t)(cnt + 1));
    int n = 0;
    for (int k = gat_me; k < NE; k += gat_nproc, n++) {
        int e = perm(k, 7, 3);
        subs_of(e, &flat[2 * n]);
        ptrs[n] = &flat[2 * n];
        v[n] = dval(e);
    }
    /* first half through the pointer form, second half flat */
    int half = n / 2;
    NGA_Scatter(g, v, ptrs, half);
    NGA_Scatter_flat(g, v + half, flat + 2 * half, n - half);
    GA_Sync();

    /* gather my share of permutation 2 both ways */
    n = 0;
    for (int k = gat_me; k < NE; k += gat_nproc, n++) {
        int e = perm(k, 5, 11);
        subs_of(e, &flat[2 * n]);
        ptrs[n] = &flat[2 * n];
        v[n] = -999;
    }
    half = n / 2;
    NGA_Gather(g, v, ptrs, half);
    NGA_Gather_flat(g, v + half, flat + 2 * half, n - half);
    int bad = 0;
    for (int q = 0; q < n; q++)
        bad += v[q] != dval(flat[2 * q] * M + flat[2 * q + 1]);
    EXPECT(bad == 0, "NGA_Scatter/NGA_Gather double: %d wrong elements", bad);
    GA_Sync();

    /* scatter-accumulate: every process adds alpha * (e % 5 + 1) to elements
       e = 3k mod 101 for k < 2 NE / 3: some are hit twice in one call */
    int nacc = 2 * NE / 3;
    int *aflat = gat_malloc(sizeof(int) * 2 * (size_t)nacc);
    int **aptrs = gat_malloc(sizeof(int *) * (size_t)nacc);
    double *av = gat_malloc(sizeof(double) * (size_t)nacc);
    for (int k = 0; k < nacc; k++) {
        int e = (3 * k) % 101;
        subs_of(e, &aflat[2 * k]);
        aptrs[k] = &aflat[2 * k];
        av[k] = e % 5 + 1;
    }
    double alpha = gat_me + 1;
    GA_Zero(g);
    GA_Sync();
    NGA_Scatter_acc(g, av, aptrs, nacc / 2, &alpha);
    NGA_Scatter_acc_flat(g, av + nacc / 2, aflat + 2 * (nacc / 2), nacc - nacc / 2, &alpha);
    GA_Sync();
    double *all = gat_malloc(sizeof(double) * NE);
    int lo[2] = {0, 0}, hi[2] = {N - 1, M - 1}, ld[1] = {M};
    NGA_Get(g, lo, hi, all, ld);
    double asum = gat_nproc * (gat_nproc + 1) / 2.0;
    bad = 0;
    for (int e = 0; e < NE; e++) {
        int times = 0;
        for (int k = 0; k < nacc; k++)
            times += (3 * k) % 101 == e;
        bad += all[e] != asum * times * (e % 5 + 1);
    }
    EXPECT(bad == 0, "NGA_Scatter_acc double: %d wrong elements", bad);
    free(all);
    free(av);
    free(aptrs);
    free(aflat);
    free(v);
    free(ptrs);
    free(flat);
    GA_Sync();
    GA_Destroy(g);
}

static void test_int(void)
{
    int dims[2] = {N, M};
    int g = NGA_Create(C_INT, 2, dims, "scatter int", NULL);
    GA_Fill(g, &(int){-1});
    GA_Sync();
    /* process p scatters the elements e with e % nproc == p, value e * 3 */
    int n = 0, flat[2 * NE], vals[NE];
    for (int e = gat_me; e < NE; e += gat_nproc, n++) {
        subs_of(perm(e, 7, 0), &flat[2 * n]);
        vals[n] = perm(e, 7, 0) * 3;
    }
    NGA_Scatter_flat(g, vals, flat, n);
    GA_Sync();
    /* everyone gathers everything in reverse order */
    int *ptrs[NE], got[NE];
    for (int e = 0; e < NE; e++) {
        subs_of(NE - 1 - e, &flat[2 * e]);
        ptrs[e] = &flat[2 * e];
    }
    NGA_Gather(g, got, ptrs, NE);
    int bad = 0;
    for (int e = 0; e < NE; e++)
        bad += got[e] != (NE - 1 - e) * 3;
    EXPECT(bad == 0, "NGA_Scatter_flat/NGA_Gather int: %d wrong elements", bad);
    GA_Sync();
    /* everybody scatter-accumulates 2 * (p + 1) onto the first column */
    int col[N], ones[N], two = 2;
    for (int i = 0; i < N; i++) {
        flat[2 * i] = i;
        flat[2 * i + 1] = 0;
        ones[i] = gat_me + 1;
    }
    NGA_Scatter_acc_flat(g, ones, flat, N, &two);
    GA_Sync();
    int lo[2] = {0, 0}, hi[2] = {N - 1, 0}, ld[1] = {1};
    NGA_Get(g, lo, hi, col, ld);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += col[i] != i * M * 3 + gat_nproc * (gat_nproc + 1);
    EXPECT(bad == 0, "NGA_Scatter_acc_flat int: %d wrong elements", bad);
    GA_Sync();
    GA_Destroy(g);
}

static void test_dcomplex(void)
{
    int dims[2] = {N, M};
    int g = NGA_Create(C_DCPL, 2, dims, "scatter dcomplex", NULL);
    GA_Zero(g);
    GA_Sync();
    /* process 0 scatters the diagonal-ish elements e = 4k, then all gather */
    int n = 0, flat[2 * NE];
    DoubleComplex v[NE];
    for (int e = 0; e < NE; e += 4, n++) {
        subs_of(e, &flat[2 * n]);
        v[n].real = e;
        v[n].imag = -e;
    }
    if (gat_me == 0)
        NGA_Scatter_flat(g, v, flat, n);
    GA_Sync();
    DoubleComplex alpha = {0.0, 1.0}; /* i */
    NGA_Scatter_acc_flat(g, v, flat, n, &alpha);
    GA_Sync();
    DoubleComplex got[NE];
    NGA_Gather_flat(g, got, flat, n);
    int bad = 0;
    for (int q = 0; q < n; q++) {
        double e = v[q].real;
        /* e - ie + nproc * i (e - ie) = e (1 + nproc) + i e (nproc - 1) */
        bad += got[q].real != e * (1 + gat_nproc) || got[q].imag != e * (gat_nproc - 1);
    }
    EXPECT(bad == 0, "NGA_Scatter_acc dcomplex: %d wrong elements", bad);
    GA_Sync();
    GA_Destroy(g);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_double();
    test_int();
    test_dcomplex();
    return gat_finish("c_scatter");
}
