/*
 * GA suite, C: element-wise operations, norms, selection and diagonals.
 *
 * GA_Elem_multiply / _divide / _maximum / _minimum (whole arrays and
 * patches), GA_Abs_value(_patch), GA_Add_constant(_patch), GA_Recip(_patch),
 * GA_Scale, GA_Add, GA_Median (element-wise median of three arrays),
 * GA_Norm1 (GA 5.8: sum of |a_ij|) and GA_Norm_infinity (max |a_ij|), both
 * finished with armci_msg_*gop, NGA_Select_elem "max"/"min" (value and
 * subscript, through armci_msg_sel), GA_Scale_rows/_cols with a vector
 * array, and the diagonal family (GA_Get_diag, GA_Set_diagonal,
 * GA_Add_diagonal, GA_Shift_diagonal). Double and int
 * arrays; divisors and reciprocals are powers of two so all results are
 * exact. The reference is the same operation done on a local copy.
 */
#include "gacheck.h"

#include <math.h>
#include <string.h>

#define N 14
#define M 9
#define S 12 /* square matrices for the diagonal family */

static double aval(int i, int j)
{
    return (double)((5 * i + 3 * j) % 13 - 6);
}

static double bval(int i, int j)
{
    static const double p2[] = {-4, -2, -1, 1, 2, 4, 0.5, -0.5};
    return p2[(i + 2 * j) % 8];
}

static double cval(int i, int j)
{
    return (double)((i * j) % 7 - 3);
}

static int create(int type, int rows, int cols, const char *name)
{
    int dims[2] = {rows, cols};
    int g = NGA_Create(type, 2, dims, (char *)name, NULL);
    EXPECT(g != 0, "creating %s failed", name);
    return g;
}

static void put_fn(int g, int rows, int cols, double (*f)(int, int))
{
    if (gat_me == 0) {
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

static void get_all(int g, int rows, int cols, double *out)
{
    int lo[2] = {0, 0}, hi[2] = {rows - 1, cols - 1}, ld[1] = {cols};
    NGA_Get(g, lo, hi, out, ld);
}

/* Compares array g with want[] (rows x cols), reporting the first mismatch. */
static void check_all(int g, int rows, int cols, const double *want, const char *what)
{
    double *got = gat_malloc(sizeof(double) * (size_t)rows * cols);
    get_all(g, rows, cols, got);
    int bad = 0;
    for (int k = 0; k < rows * cols; k++)
        if (got[k] != want[k] && bad++ == 0)
            EXPECT(0, "%s: (%d,%d) = %g, expected %g", what, k / cols, k % cols, got[k], want[k]);
    EXPECT(bad == 0, "%s: %d wrong elements", what, bad);
    free(got);
    GA_Sync();
}

static double med3(double a, double b, double c)
{
    double lo = fmin(a, fmin(b, c)), hi = fmax(a, fmax(b, c));
    return a + b + c - lo - hi;
}

static void test_elementwise(void)
{
    int ga = create(C_DBL, N, M, "a"), gb = create(C_DBL, N, M, "b");
    int gc = create(C_DBL, N, M, "c"), gm = create(C_DBL, N, M, "m");
    put_fn(ga, N, M, aval);
    put_fn(gb, N, M, bval);
    put_fn(gc, N, M, cval);
    double want[N * M];

    GA_Elem_multiply(ga, gb, gm);
    for (int k = 0; k < N * M; k++)
        want[k] = aval(k / M, k % M) * bval(k / M, k % M);
    check_all(gm, N, M, want, "GA_Elem_multiply");

    GA_Elem_divide(ga, gb, gm);
    for (int k = 0; k < N * M; k++)
        want[k] = aval(k / M, k % M) / bval(k / M, k % M);
    check_all(gm, N, M, want, "GA_Elem_divide");

    GA_Elem_maximum(ga, gc, gm);
    for (int k = 0; k < N * M; k++)
        want[k] = fmax(aval(k / M, k % M), cval(k / M, k % M));
    check_all(gm, N, M, want, "GA_Elem_maximum");

    GA_Elem_minimum(ga, gc, gm);
    for (int k = 0; k < N * M; k++)
        want[k] = fmin(aval(k / M, k % M), cval(k / M, k % M));
    check_all(gm, N, M, want, "GA_Elem_minimum");

    GA_Median(ga, gb, gc, gm);
    for (int k = 0; k < N * M; k++)
        want[k] = med3(aval(k / M, k % M), bval(k / M, k % M), cval(k / M, k % M));
    check_all(gm, N, M, want, "GA_Median");

    /* patch forms on an inner patch, the rest of m keeps the median */
    int lo[2] = {2, 1}, hi[2] = {N - 3, M - 2};
    GA_Elem_multiply_patch(ga, lo, hi, gc, lo, hi, gm, lo, hi);
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            want[i * M + j] = aval(i, j) * cval(i, j);
    check_all(gm, N, M, want, "GA_Elem_multiply_patch");

    /* in-place unary ops on a copy of a */
    GA_Copy(ga, gm);
    GA_Abs_value(gm);
    for (int k = 0; k < N * M; k++)
        want[k] = fabs(aval(k / M, k % M));
    check_all(gm, N, M, want, "GA_Abs_value");
    double c = -2.5;
    GA_Add_constant(gm, &c);
    for (int k = 0; k < N * M; k++)
        want[k] += c;
    check_all(gm, N, M, want, "GA_Add_constant");
    GA_Add_constant_patch(gm, lo, hi, &c);
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            want[i * M + j] += c;
    check_all(gm, N, M, want, "GA_Add_constant_patch");

    GA_Copy(gb, gm);
    GA_Recip(gm);
    for (int k = 0; k < N * M; k++)
        want[k] = 1.0 / bval(k / M, k % M);
    check_all(gm, N, M, want, "GA_Recip");
    GA_Recip_patch(gm, lo, hi); /* back to b inside the patch */
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            want[i * M + j] = bval(i, j);
    check_all(gm, N, M, want, "GA_Recip_patch");

    GA_Copy(ga, gm);
    GA_Abs_value_patch(gm, lo, hi);
    for (int k = 0; k < N * M; k++) {
        int i = k / M, j = k % M;
        int in = i >= lo[0] && i <= hi[0] && j >= lo[1] && j <= hi[1];
        want[k] = in ? fabs(aval(i, j)) : aval(i, j);
    }
    check_all(gm, N, M, want, "GA_Abs_value_patch");

    double s = -3.0, alpha = 2.0, beta = -1.0;
    GA_Copy(ga, gm);
    GA_Scale(gm, &s);
    GA_Add(&alpha, gm, &beta, gc, gm); /* m = 2 (-3 a) - c */
    for (int k = 0; k < N * M; k++)
        want[k] = 2 * (-3 * aval(k / M, k % M)) - cval(k / M, k % M);
    check_all(gm, N, M, want, "GA_Scale/GA_Add");

    /* norms and selection of a */
    double n1 = -1, ninf = -1, e1 = 0, einf = 0;
    for (int k = 0; k < N * M; k++) {
        e1 += fabs(aval(k / M, k % M));
        einf = fmax(einf, fabs(aval(k / M, k % M)));
    }
    GA_Norm1(ga, &n1);
    GA_Norm_infinity(ga, &ninf);
    EXPECT(n1 == e1, "GA_Norm1 = %g, expected %g", n1, e1);
    EXPECT(ninf == einf, "GA_Norm_infinity = %g, expected %g", ninf, einf);

    double vmax = -1e9, vmin = 1e9;
    for (int k = 0; k < N * M; k++) {
        vmax = fmax(vmax, aval(k / M, k % M));
        vmin = fmin(vmin, aval(k / M, k % M));
    }
    double got;
    int sub[2] = {-1, -1};
    NGA_Select_elem(ga, "max", &got, sub);
    EXPECT(got == vmax && sub[0] >= 0 && sub[0] < N && sub[1] >= 0 && sub[1] < M &&
               aval(sub[0], sub[1]) == vmax,
           "NGA_Select_elem max = %g at (%d,%d), expected %g", got, sub[0], sub[1], vmax);
    NGA_Select_elem(ga, "min", &got, sub);
    EXPECT(got == vmin && sub[0] >= 0 && sub[0] < N && sub[1] >= 0 && sub[1] < M &&
               aval(sub[0], sub[1]) == vmin,
           "NGA_Select_elem min = %g at (%d,%d), expected %g", got, sub[0], sub[1], vmin);

    GA_Destroy(gm);
    GA_Destroy(gc);
    GA_Destroy(gb);
    GA_Destroy(ga);
}

static void test_int(void)
{
    int ga = create(C_INT, N, M, "ia"), gb = create(C_INT, N, M, "ib");
    int gm = create(C_INT, N, M, "im");
    if (gat_me == gat_nproc - 1) {
        int a[N * M], b[N * M], lo[2] = {0, 0}, hi[2] = {N - 1, M - 1}, ld[1] = {M};
        for (int k = 0; k < N * M; k++) {
            a[k] = (int)aval(k / M, k % M) * 1000;
            b[k] = (int)cval(k / M, k % M);
        }
        NGA_Put(ga, lo, hi, a, ld);
        NGA_Put(gb, lo, hi, b, ld);
    }
    GA_Sync();
    GA_Elem_maximum(ga, gb, gm);
    int got[N * M], lo[2] = {0, 0}, hi[2] = {N - 1, M - 1}, ld[1] = {M}, bad = 0;
    NGA_Get(gm, lo, hi, got, ld);
    for (int k = 0; k < N * M; k++) {
        int a = (int)aval(k / M, k % M) * 1000, b = (int)cval(k / M, k % M);
        bad += got[k] != (a > b ? a : b);
    }
    EXPECT(bad == 0, "GA_Elem_maximum int: %d wrong", bad);
    GA_Sync();
    GA_Abs_value(ga);
    int c = 7;
    GA_Add_constant(ga, &c);
    NGA_Get(ga, lo, hi, got, ld);
    bad = 0;
    for (int k = 0; k < N * M; k++)
        bad += got[k] != abs((int)aval(k / M, k % M) * 1000) + 7;
    EXPECT(bad == 0, "GA_Abs_value/GA_Add_constant int: %d wrong", bad);
    int imax = -1;
    int sub[2];
    NGA_Select_elem(ga, "max", &imax, sub);
    EXPECT(imax == 6007, "NGA_Select_elem int max = %d, expected 6007", imax);
    double n1;
    GA_Norm_infinity(ga, &n1);
    EXPECT(n1 == 6007, "GA_Norm_infinity int = %g, expected 6007", n1);
    GA_Sync();
    GA_Destroy(gm);
    GA_Destroy(gb);
    GA_Destroy(ga);
}

static double vval(int i)
{
    return (double)(i % 5 - 2);
}

static void test_diagonal_and_scaling(void)
{
    int g = create(C_DBL, S, S, "square");
    int dims[1] = {S};
    int gv = NGA_Create(C_DBL, 1, dims, "diag", NULL);
    int gd = NGA_Create(C_DBL, 1, dims, "got diag", NULL);
    if (gat_me == 0) {
        double v[S];
        for (int i = 0; i < S; i++)
            v[i] = vval(i);
        int lo[1] = {0}, hi[1] = {S - 1}, ld[1] = {1};
        NGA_Put(gv, lo, hi, v, ld);
    }
    put_fn(g, S, S, aval);
    double want[S * S], dg[S];
    for (int k = 0; k < S * S; k++)
        want[k] = aval(k / S, k % S);

    int lo1[1] = {0}, hi1[1] = {S - 1}, ld1[1] = {1};
    GA_Get_diag(g, gd);
    GA_Sync();
    NGA_Get(gd, lo1, hi1, dg, ld1);
    for (int i = 0; i < S; i++)
        EXPECT(dg[i] == aval(i, i), "GA_Get_diag [%d] = %g, expected %g", i, dg[i], aval(i, i));

    GA_Set_diagonal(g, gv);
    for (int i = 0; i < S; i++)
        want[i * S + i] = vval(i);
    check_all(g, S, S, want, "GA_Set_diagonal");
    GA_Add_diagonal(g, gv);
    for (int i = 0; i < S; i++)
        want[i * S + i] += vval(i);
    check_all(g, S, S, want, "GA_Add_diagonal");
    double shift = 10;
    GA_Shift_diagonal(g, &shift);
    for (int i = 0; i < S; i++)
        want[i * S + i] += shift;
    check_all(g, S, S, want, "GA_Shift_diagonal");
    /* (GA_Zero_diagonal is left out: GA 5.8 zeroes the wrong elements of
       blocks whose first row and first column differ, e.g. at 2 processes) */

    /* in the C view, Scale_rows multiplies element (i, j) by v[i] and
       Scale_cols by v[j] */
    GA_Scale_rows(g, gv);
    for (int k = 0; k < S * S; k++)
        want[k] *= vval(k / S);
    check_all(g, S, S, want, "GA_Scale_rows");
    GA_Scale_cols(g, gv);
    for (int k = 0; k < S * S; k++)
        want[k] *= vval(k % S);
    check_all(g, S, S, want, "GA_Scale_cols");

    GA_Destroy(gd);
    GA_Destroy(gv);
    GA_Destroy(g);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_elementwise();
    test_int();
    test_diagonal_and_scaling();
    return gat_finish("c_elem");
}
