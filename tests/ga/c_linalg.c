/*
 * GA suite, C: GA's dense linear algebra, which libga routes to ScaLAPACK.
 *
 * GA_Lu_solve, GA_Llt_solve, GA_Solve and GA_Spd_invert; eigenproblems
 * through GA_Diag_std_seq and GA_Diag_seq (generalized), which gather the
 * matrix, solve it on one process and distribute the eigenvectors.
 * (GA_Diag/GA_Diag_std need PEIGS, which Debian's libga lacks: "ga_diag:
 * peigs not interfaced"; f_linalg.F90 uses the ScaLAPACK eigensolvers.) GA copies
 * the arrays into ScaLAPACK's block-cyclic layout and back with
 * NGA_Get/NGA_Put/strided transfers across all processes, so a transfer
 * bug shows as a wrong solution. The answers are known in advance: right
 * hand sides are built from chosen integer solutions, the eigenproblem is
 * the tridiagonal (-1, 2, -1) matrix whose eigenvalues are 2 - 2 cos(k pi
 * / (n + 1)). The solvers' rounding depends on the process grid, so these
 * are the only checks of the suite with a tolerance (1e-9 relative).
 *
 * GA's Fortran core sees a C array transposed: with right-hand sides as C
 * rows, GA_Lu_solve('N') solves A^T x = b in the C view; the symmetric
 * matrices of the other solvers make the distinction moot. f_linalg.F90
 * covers the transposed LU solve through the Fortran API.
 */
#include "gacheck.h"

#include <math.h>
#include <string.h>

#define N    24
#define NRHS 3
#define TOL  1e-9

static int near(double got, double want)
{
    return fabs(got - want) <= TOL * fmax(1.0, fabs(want));
}

/* A general, diagonally dominant matrix (C view). */
static double gen(int i, int j)
{
    return i == j ? 30.0 + i : (double)((3 * i + 5 * j) % 7 - 3);
}

/* A symmetric positive definite matrix. */
static double spd(int i, int j)
{
    return i == j ? 4.0 * N : (double)((i + j) % 5 - 2);
}

static double xval(int r, int i)
{
    return (double)((r + 2 * i) % 9 - 4);
}

static int create(int rows, int cols, const char *name)
{
    int dims[2] = {rows, cols};
    int g = NGA_Create(C_DBL, 2, dims, (char *)name, NULL);
    EXPECT(g != 0, "creating %s failed", name);
    return g;
}

static void put_matrix(int g, int rows, int cols, const double *v)
{
    if (gat_me == 0) {
        int lo[2] = {0, 0}, hi[2] = {rows - 1, cols - 1}, ld[1] = {cols};
        NGA_Put(g, lo, hi, (void *)v, ld);
    }
    GA_Sync();
}

static void get_matrix(int g, int rows, int cols, double *v)
{
    int lo[2] = {0, 0}, hi[2] = {rows - 1, cols - 1}, ld[1] = {cols};
    NGA_Get(g, lo, hi, v, ld);
}

/* b_r = op(A) x_r for every rhs r, op(A) = A or A^T in the C view. */
static void make_rhs(double (*a)(int, int), int transpose, double *b)
{
    for (int r = 0; r < NRHS; r++)
        for (int i = 0; i < N; i++) {
            double s = 0;
            for (int j = 0; j < N; j++)
                s += (transpose ? a(j, i) : a(i, j)) * xval(r, j);
            b[r * N + i] = s;
        }
}

static void check_solution(int g_b, const char *what)
{
    double x[NRHS * N];
    get_matrix(g_b, NRHS, N, x);
    int bad = 0;
    for (int r = 0; r < NRHS; r++)
        for (int i = 0; i < N; i++)
            if (!near(x[r * N + i], xval(r, i)) && bad++ == 0)
                EXPECT(0, "%s: x[%d][%d] = %.17g, expected %g", what, r, i, x[r * N + i],
                       xval(r, i));
    EXPECT(bad == 0, "%s: %d wrong elements", what, bad);
    GA_Sync();
}

static void fill(double (*a)(int, int), double *m)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            m[i * N + j] = a(i, j);
}

static void test_solvers(void)
{
    double am[N * N], b[NRHS * N];
    int g_a = create(N, N, "A"), g_b = create(NRHS, N, "B");

    /* LU: 'N' solves A^T x = b in the C view. (Not 'T': GA 5.8's C
       wrapper turns it into trans = 'y', which pdgetrs rejects.) */
    fill(gen, am);
    put_matrix(g_a, N, N, am);
    make_rhs(gen, 1, b);
    put_matrix(g_b, NRHS, N, b);
    GA_Lu_solve('N', g_a, g_b);
    GA_Sync();
    check_solution(g_b, "GA_Lu_solve");

    fill(spd, am);
    put_matrix(g_a, N, N, am);
    make_rhs(spd, 0, b);
    put_matrix(g_b, NRHS, N, b);
    int rc = GA_Llt_solve(g_a, g_b);
    GA_Sync();
    EXPECT(rc == 0, "GA_Llt_solve returned %d", rc);
    check_solution(g_b, "GA_Llt_solve");

    put_matrix(g_a, N, N, am);
    put_matrix(g_b, NRHS, N, b);
    rc = GA_Solve(g_a, g_b);
    GA_Sync();
    EXPECT(rc == 0, "GA_Solve returned %d", rc);
    check_solution(g_b, "GA_Solve");

    /* inverse of the SPD matrix: inv * A = I */
    put_matrix(g_a, N, N, am);
    rc = GA_Spd_invert(g_a);
    GA_Sync();
    EXPECT(rc == 0, "GA_Spd_invert returned %d", rc);
    double inv[N * N];
    get_matrix(g_a, N, N, inv);
    int bad = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++)
                s += inv[i * N + k] * am[k * N + j];
            if (!near(s, i == j) && bad++ == 0)
                EXPECT(0, "GA_Spd_invert: (inv A)(%d,%d) = %.17g", i, j, s);
        }
    EXPECT(bad == 0, "GA_Spd_invert: %d wrong elements of inv(A) A", bad);
    GA_Sync();
    GA_Destroy(g_b);
    GA_Destroy(g_a);
}

static double tridiag(int i, int j)
{
    return i == j ? 2.0 : (abs(i - j) == 1 ? -1.0 : 0.0);
}

/* eigenvalues ascending; eigenvector k is row k of v in the C view */
static void check_eigen(const double *eval, const double *v, double scale, const char *what)
{
    const double pi = acos(-1.0);
    int bad = 0;
    for (int k = 0; k < N; k++) {
        double want = scale * (2.0 - 2.0 * cos((k + 1) * pi / (N + 1)));
        if (!near(eval[k], want) && bad++ == 0)
            EXPECT(0, "%s: eigenvalue %d = %.17g, expected %.17g", what, k, eval[k], want);
    }
    EXPECT(bad == 0, "%s: %d wrong eigenvalues", what, bad);
    /* residual |A x - lambda S x| with S = I / scale, and |x| != 0 */
    bad = 0;
    for (int k = 0; k < N; k++) {
        const double *x = &v[k * N];
        double norm = 0, res = 0;
        for (int i = 0; i < N; i++) {
            double ax = 0;
            for (int j = 0; j < N; j++)
                ax += tridiag(i, j) * x[j];
            res = fmax(res, fabs(ax - eval[k] / scale * x[i]));
            norm = fmax(norm, fabs(x[i]));
        }
        if ((res > 1e-8 * fmax(1, norm) || norm == 0) && bad++ == 0)
            EXPECT(0, "%s: eigenvector %d residual %g (max |x| %g)", what, k, res, norm);
    }
    EXPECT(bad == 0, "%s: %d wrong eigenvectors", what, bad);
}

static void test_eigen(void)
{
    double am[N * N], v[N * N], eval[N];
    int g_a = create(N, N, "T"), g_v = create(N, N, "V");
    fill(tridiag, am);
    put_matrix(g_a, N, N, am);
    GA_Zero(g_v);
    GA_Diag_std_seq(g_a, g_v, eval);
    GA_Sync();
    get_matrix(g_v, N, N, v);
    check_eigen(eval, v, 1.0, "GA_Diag_std_seq");

    /* generalized: A v = lambda S v with S = 2 I: eigenvalues halve */
    double sm[N * N];
    int g_s = create(N, N, "S");
    for (int i = 0; i < N * N; i++)
        sm[i] = i % (N + 1) == 0 ? 2.0 : 0.0;
    put_matrix(g_a, N, N, am);
    put_matrix(g_s, N, N, sm);
    GA_Zero(g_v);
    GA_Diag_seq(g_a, g_s, g_v, eval);
    GA_Sync();
    get_matrix(g_v, N, N, v);
    check_eigen(eval, v, 0.5, "GA_Diag_seq");
    GA_Destroy(g_s);

    GA_Destroy(g_v);
    GA_Destroy(g_a);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_solvers();
    test_eigen();
    return gat_finish("c_linalg");
}
