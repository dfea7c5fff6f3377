/*
 * GA suite, C: patch algebra, transposes and matrix multiplication.
 *
 * NGA_Copy_patch (plain and transposed, between patches at different
 * positions of arrays with different distributions), NGA_Zero_patch,
 * NGA_Fill_patch, NGA_Scale_patch, NGA_Add_patch, NGA_Ddot_patch,
 * NGA_Idot_patch and NGA_Zdot_patch, GA_Transpose of a non-square array,
 * GA_Symmetrize, GA_Dgemm with every transpose combination, GA_Zgemm, and
 * NGA_Matmul_patch on sub-patches. These move whole blocks between owners
 * with strided gets and puts (and accumulates for the multiplications).
 * Matrix entries are small integers so every product and dot is exact and
 * compared for equality with a local computation.
 */
#include "gacheck.h"

#include <stdio.h>
#include <string.h>

#define N 20
#define M 13

static double aval(int i, int j)
{
    return (double)((3 * i + 7 * j) % 11 - 5);
}

static double bval(int i, int j)
{
    return (double)((2 * i + 5 * j) % 7 - 3);
}

static int create2(int type, int rows, int cols, const char *name, int chunk_rows)
{
    int dims[2] = {rows, cols}, chunk[2] = {chunk_rows, -1};
    int g = NGA_Create(type, 2, dims, (char *)name, chunk_rows > 0 ? chunk : NULL);
    EXPECT(g != 0, "creating %s failed", name);
    return g;
}

static void put_fn(int g, int rows, int cols, double (*f)(int, int))
{
    if (gat_me == gat_nproc / 2) {
        double *b = gat_malloc(sizeof(double) * (size_t)rows * cols);
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                b[i * cols + j] = f(i, j);
        int lo[2] = {0, 0}, hi[2] = {rows - 1, cols - 1}, ld[1] = {cols};
        NGA_Put(g, lo, hi, b, ld);
        free(b);
    }
    GA_Sync();
}

static void check_all(int g, int rows, int cols, const double *want, const char *what)
{
    double *got = gat_malloc(sizeof(double) * (size_t)rows * cols);
    int lo[2] = {0, 0}, hi[2] = {rows - 1, cols - 1}, ld[1] = {cols};
    NGA_Get(g, lo, hi, got, ld);
    int bad = 0;
    for (int k = 0; k < rows * cols; k++)
        if (got[k] != want[k] && bad++ == 0)
            EXPECT(0, "%s: (%d,%d) = %g, expected %g", what, k / cols, k % cols, got[k], want[k]);
    EXPECT(bad == 0, "%s: %d wrong elements", what, bad);
    free(got);
    GA_Sync();
}

static void test_patches(void)
{
    int ga = create2(C_DBL, N, M, "a", 0), gb = create2(C_DBL, N + 3, M + 2, "b", 3);
    int gc = create2(C_DBL, M, N, "c", 0);
    put_fn(ga, N, M, aval);
    GA_Zero(gb);
    GA_Sync();
    double wb[(N + 3) * (M + 2)];
    memset(wb, 0, sizeof(wb));

    /* a[2..11][1..9] -> b[5..14][3..11] */
    int alo[2] = {2, 1}, ahi[2] = {11, 9}, blo[2] = {5, 3}, bhi[2] = {14, 11};
    NGA_Copy_patch('N', ga, alo, ahi, gb, blo, bhi);
    for (int i = 0; i <= 9; i++)
        for (int j = 0; j <= 8; j++)
            wb[(5 + i) * (M + 2) + 3 + j] = aval(2 + i, 1 + j);
    check_all(gb, N + 3, M + 2, wb, "NGA_Copy_patch");

    /* transposed: a[0..5][3..12] (6 x 10) -> c[1..10][4..9] (10 x 6) */
    GA_Zero(gc);
    int tlo[2] = {0, 3}, thi[2] = {5, 12}, clo[2] = {1, 4}, chi[2] = {10, 9};
    NGA_Copy_patch('T', ga, tlo, thi, gc, clo, chi);
    double wc[M * N];
    memset(wc, 0, sizeof(wc));
    for (int i = 0; i <= 9; i++)
        for (int j = 0; j <= 5; j++)
            wc[(1 + i) * N + 4 + j] = aval(j, 3 + i);
    check_all(gc, M, N, wc, "NGA_Copy_patch transposed");

    /* fill, zero and scale patches of b */
    double seven = 7, half = 0.5;
    int flo[2] = {0, 0}, fhi[2] = {3, M + 1}, zlo[2] = {8, 4}, zhi[2] = {9, 6};
    NGA_Fill_patch(gb, flo, fhi, &seven);
    NGA_Zero_patch(gb, zlo, zhi);
    NGA_Scale_patch(gb, blo, bhi, &half);
    for (int i = 0; i < N + 3; i++)
        for (int j = 0; j < M + 2; j++) {
            double *w = &wb[i * (M + 2) + j];
            if (i <= 3)
                *w = 7;
            if (i >= 8 && i <= 9 && j >= 4 && j <= 6)
                *w = 0;
            if (i >= 5 && i <= 14 && j >= 3 && j <= 11)
                *w *= 0.5;
        }
    check_all(gb, N + 3, M + 2, wb, "NGA_Fill/Zero/Scale_patch");

    /* c[0..4][0..4] = 2 a[10..14][2..6] - 4 b[16..20][9..13] */
    double two = 2, mfour = -4;
    int plo[2] = {10, 2}, phi[2] = {14, 6}, qlo[2] = {16, 9}, qhi[2] = {20, 13};
    int rlo[2] = {0, 0}, rhi[2] = {4, 4};
    GA_Zero(gc);
    NGA_Add_patch(&two, ga, plo, phi, &mfour, gb, qlo, qhi, gc, rlo, rhi);
    memset(wc, 0, sizeof(wc));
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            wc[i * N + j] = 2 * aval(10 + i, 2 + j) - 4 * wb[(16 + i) * (M + 2) + 9 + j];
    check_all(gc, M, N, wc, "NGA_Add_patch");

    /* dot of a[2..11][1..9] with b[5..14][3..11] (b holds half of it) */
    double dot = NGA_Ddot_patch(ga, 'N', alo, ahi, gb, 'N', blo, bhi), want = 0;
    for (int i = 0; i <= 9; i++)
        for (int j = 0; j <= 8; j++)
            want += aval(2 + i, 1 + j) * wb[(5 + i) * (M + 2) + 3 + j];
    EXPECT(dot == want, "NGA_Ddot_patch = %g, expected %g", dot, want);
    GA_Sync();
    GA_Destroy(gc);
    GA_Destroy(gb);
    GA_Destroy(ga);
}

static void test_int_complex_dots(void)
{
    int gi = create2(C_INT, N, M, "int", 0), gz = create2(C_DCPL, N, M, "dcomplex", 0);
    if (gat_me == 0) {
        int iv[N * M];
        DoubleComplex zv[N * M];
        for (int k = 0; k < N * M; k++) {
            iv[k] = (int)aval(k / M, k % M);
            zv[k].real = aval(k / M, k % M);
            zv[k].imag = bval(k / M, k % M);
        }
        int lo[2] = {0, 0}, hi[2] = {N - 1, M - 1}, ld[1] = {M};
        NGA_Put(gi, lo, hi, iv, ld);
        NGA_Put(gz, lo, hi, zv, ld);
    }
    GA_Sync();
    int lo1[2] = {0, 0}, hi1[2] = {N / 2 - 1, M - 1}, lo2[2] = {N / 2, 0}, hi2[2] = {N - 1, M - 1};
    int idot = NGA_Idot_patch(gi, 'N', lo1, hi1, gi, 'N', lo2, hi2), iwant = 0;
    DoubleComplex zdot = NGA_Zdot_patch(gz, 'N', lo1, hi1, gz, 'N', lo2, hi2);
    double zr = 0, zi = 0;
    for (int i = 0; i < N / 2; i++)
        for (int j = 0; j < M; j++) {
            iwant += (int)aval(i, j) * (int)aval(N / 2 + i, j);
            double ar = aval(i, j), ai = bval(i, j);
            double br = aval(N / 2 + i, j), bi = bval(N / 2 + i, j);
            zr += ar * br - ai * bi; /* GA's zdot does not conjugate */
            zi += ar * bi + ai * br;
        }
    EXPECT(idot == iwant, "NGA_Idot_patch = %d, expected %d", idot, iwant);
    EXPECT(zdot.real == zr && zdot.imag == zi, "NGA_Zdot_patch = (%g,%g), expected (%g,%g)",
           zdot.real, zdot.imag, zr, zi);
    GA_Sync();
    GA_Destroy(gz);
    GA_Destroy(gi);
}

static void test_transpose_symmetrize(void)
{
    int ga = create2(C_DBL, N, M, "a", 0), gt = create2(C_DBL, M, N, "a^T", 0);
    put_fn(ga, N, M, aval);
    GA_Zero(gt);
    GA_Transpose(ga, gt);
    double wt[M * N];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            wt[i * N + j] = aval(j, i);
    check_all(gt, M, N, wt, "GA_Transpose");

    /* symmetrize a square matrix of even entries: (s + s^T) / 2 is exact */
    int gs = create2(C_DBL, N, N, "s", 0);
    double ws[N * N];
    if (gat_me == 0) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                ws[i * N + j] = 2 * aval(i, j % M) + 4 * j;
        int lo[2] = {0, 0}, hi[2] = {N - 1, N - 1}, ld[1] = {N};
        NGA_Put(gs, lo, hi, ws, ld);
    }
    GA_Sync();
    GA_Symmetrize(gs);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            ws[i * N + j] = ((2 * aval(i, j % M) + 4 * j) + (2 * aval(j, i % M) + 4 * i)) / 2;
    check_all(gs, N, N, ws, "GA_Symmetrize");
    GA_Destroy(gs);
    GA_Destroy(gt);
    GA_Destroy(ga);
}

/* C (m x n) = op(A) op(B), A and B stored as given, every combination. */
static void test_dgemm(void)
{
    enum { MM = 14, NN = 11, KK = 9 };
    static const char tr[2] = {'N', 'T'};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int ar = ta ? KK : MM, ac = ta ? MM : KK, br = tb ? NN : KK, bc = tb ? KK : NN;
            int g_a = create2(C_DBL, ar, ac, "dgemm a", 0),
                g_b = create2(C_DBL, br, bc, "dgemm b", 0);
            int g_c = create2(C_DBL, MM, NN, "dgemm c", 0);
            put_fn(g_a, ar, ac, aval);
            put_fn(g_b, br, bc, bval);
            GA_Fill(g_c, &(double){1.0});
            GA_Dgemm(tr[ta], tr[tb], MM, NN, KK, 2.0, g_a, g_b, -3.0, g_c);
            double w[MM * NN];
            for (int i = 0; i < MM; i++)
                for (int j = 0; j < NN; j++) {
                    double s = 0;
                    for (int l = 0; l < KK; l++)
                        s += (ta ? aval(l, i) : aval(i, l)) * (tb ? bval(j, l) : bval(l, j));
                    w[i * NN + j] = 2 * s - 3;
                }
            char what[32];
            snprintf(what, sizeof(what), "GA_Dgemm %c%c", tr[ta], tr[tb]);
            check_all(g_c, MM, NN, w, what);
            GA_Destroy(g_c);
            GA_Destroy(g_b);
            GA_Destroy(g_a);
        }
}

static void test_zgemm(void)
{
    enum { Z = 8 };
    int dims[2] = {Z, Z};
    int g_a = NGA_Create(C_DCPL, 2, dims, "za", NULL),
        g_b = NGA_Create(C_DCPL, 2, dims, "zb", NULL);
    int g_c = NGA_Create(C_DCPL, 2, dims, "zc", NULL);
    if (gat_me == gat_nproc - 1) {
        DoubleComplex a[Z * Z], b[Z * Z];
        for (int k = 0; k < Z * Z; k++) {
            a[k].real = aval(k / Z, k % Z);
            a[k].imag = bval(k / Z, k % Z);
            b[k].real = bval(k % Z, k / Z);
            b[k].imag = -aval(k / Z, k % Z);
        }
        int lo[2] = {0, 0}, hi[2] = {Z - 1, Z - 1}, ld[1] = {Z};
        NGA_Put(g_a, lo, hi, a, ld);
        NGA_Put(g_b, lo, hi, b, ld);
    }
    GA_Zero(g_c);
    GA_Sync();
    DoubleComplex one = {1, 0}, zero = {0, 0};
    GA_Zgemm('N', 'N', Z, Z, Z, one, g_a, g_b, zero, g_c);
    DoubleComplex c[Z * Z];
    int lo[2] = {0, 0}, hi[2] = {Z - 1, Z - 1}, ld[1] = {Z};
    NGA_Get(g_c, lo, hi, c, ld);
    int bad = 0;
    for (int i = 0; i < Z; i++)
        for (int j = 0; j < Z; j++) {
            double re = 0, im = 0;
            for (int l = 0; l < Z; l++) {
                double ar = aval(i, l), ai = bval(i, l), br = bval(j, l), bi = -aval(l, j);
                re += ar * br - ai * bi;
                im += ar * bi + ai * br;
            }
            bad += c[i * Z + j].real != re || c[i * Z + j].imag != im;
        }
    EXPECT(bad == 0, "GA_Zgemm: %d wrong elements", bad);
    GA_Sync();
    GA_Destroy(g_c);
    GA_Destroy(g_b);
    GA_Destroy(g_a);
}

/* c[2..7][1..5] = a[1..6][2..5] * b[0..3][3..7], rest of c untouched */
static void test_matmul_patch(void)
{
    int g_a = create2(C_DBL, 9, 8, "mp a", 0), g_b = create2(C_DBL, 6, 10, "mp b", 0);
    int g_c = create2(C_DBL, 10, 7, "mp c", 0);
    put_fn(g_a, 9, 8, aval);
    put_fn(g_b, 6, 10, bval);
    double minus1 = -1.0, one = 1.0;
    GA_Fill(g_c, &minus1);
    int alo[2] = {1, 2}, ahi[2] = {6, 5}, blo[2] = {0, 3}, bhi[2] = {3, 7}, clo[2] = {2, 1},
        chi[2] = {7, 5};
    NGA_Matmul_patch('N', 'N', &one, &one, g_a, alo, ahi, g_b, blo, bhi, g_c, clo, chi);
    double w[10 * 7];
    for (int k = 0; k < 70; k++)
        w[k] = -1;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++) {
            double s = 0;
            for (int l = 0; l < 4; l++)
                s += aval(1 + i, 2 + l) * bval(l, 3 + j);
            w[(2 + i) * 7 + 1 + j] = s - 1;
        }
    check_all(g_c, 10, 7, w, "NGA_Matmul_patch");
    GA_Destroy(g_c);
    GA_Destroy(g_b);
    GA_Destroy(g_a);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_patches();
    test_int_complex_dots();
    test_transpose_symmetrize();
    test_dgemm();
    test_zgemm();
    test_matmul_patch();
    return gat_finish("c_patch");
}
