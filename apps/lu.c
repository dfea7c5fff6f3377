/*
 * lu: blocked LU factorisation of a distributed dense matrix over ARMCI.
 *
 * The N x N matrix of doubles is cut into nb x nb blocks (the last block row
 * and column may be narrower) spread 2-D block-cyclically over a pr x pc
 * process grid: block (I, J) lives on grid process (I mod pr, J mod pc). Each
 * process keeps its blocks as one column-major local matrix in ARMCI memory,
 * so a block is a strided region of its owner's segment and moves with one
 * ARMCI_GetS or ARMCI_PutS.
 *
 * Right-looking elimination without pivoting, on a strictly diagonally
 * dominant matrix (for which no pivoting is backward stable). Step K:
 *   1. factor the diagonal block: A(K,K) = L(K,K) U(K,K);
 *   2. panels: L(I,K) = A(I,K) U(K,K)^-1 and U(K,J) = L(K,K)^-1 A(K,J);
 *   3. trailing update: A(I,J) -= L(I,K) U(K,J) for I, J > K;
 * with an ARMCI_Barrier after each phase. Every block operation fetches the
 * blocks it reads, computes in private buffers and writes its block back.
 * The process doing block (I, J) is its owner's rank plus --shift: 0 keeps
 * the work on the owner, anything else turns every write into a remote
 * strided put (more traffic for the runtime, same answer).
 *
 * Verification: each owner recomputes its blocks of L*U from fetched blocks
 * of the factors and compares them with A, regenerated from its formula.
 */
#include "app_common.h"

#include <float.h>
#include <inttypes.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: lu [-n N] [-b NB] [-s SHIFT] [-r SEED]\n"
    "  -n N      matrix order (default 768)\n"
    "  -b NB     block order (default 32)\n"
    "  -s SHIFT  block (I,J) is computed by owner rank + SHIFT (default 0)\n"
    "  -r SEED   seed of the matrix entries (default 1)\n";

struct lu_options {
    int n, nb, shift;
    long seed;
};

/* The distribution: who owns and who computes each block, and where it is stored. */
struct lu_layout {
    int n, nb, nblk; /* matrix order, block order, blocks per dimension */
    int pr, pc;      /* process grid, ranks numbered row-major */
    int nproc, me, shift;
};

struct lu_matrix {
    struct lu_layout lay;
    void **bases; /* every process's local matrix, column-major */
    size_t bytes; /* of this process's local matrix */
};

/* Private buffers of one process; each cache slot remembers the step it was fetched for. */
struct lu_work {
    double *block;       /* the block being computed */
    double *diag;        /* factored diagonal block of the step */
    double *lcol, *urow; /* L(I,K) for each I, U(K,J) for each J: nb*nb each */
    int diag_step;       /* step + 1 the slot holds, 0 for none */
    int *lcol_step, *urow_step;
};

static struct lu_options parse_options(int argc, char **argv)
{
    struct lu_options opt = {.n = 768, .nb = 32, .shift = 0, .seed = 1};
    int c;
    opterr = 0; /* every rank would print getopt's message; rank 0 reports below */
    while ((c = getopt(argc, argv, "n:b:s:r:h")) != -1) {
        switch (c) {
        case 'n':
            opt.n = (int)app_parse_long("lu", "-n", optarg, 1, 1 << 16);
            break;
        case 'b':
            opt.nb = (int)app_parse_long("lu", "-b", optarg, 1, 4096);
            break;
        case 's':
            opt.shift = (int)app_parse_long("lu", "-s", optarg, 0, 1 << 20);
            break;
        case 'r':
            opt.seed = app_parse_long("lu", "-r", optarg, 0, 1L << 40);
            break;
        default:
            app_usage_error("lu", usage, "unknown option or missing value: -%c", optopt);
        }
    }
    if (optind < argc)
        app_usage_error("lu", usage, "unexpected argument '%s'", argv[optind]);
    if (opt.nb > opt.n)
        app_usage_error("lu", usage, "block order %d exceeds matrix order %d", opt.nb, opt.n);
    return opt;
}

/* ---- layout ---------------------------------------------------------------------------- */

static int blk_order(const struct lu_layout *lay, int b)
{
    int rest = lay->n - b * lay->nb;
    return rest < lay->nb ? rest : lay->nb;
}

static int block_owner(const struct lu_layout *lay, int bi, int bj)
{
    return (bi % lay->pr) * lay->pc + bj % lay->pc;
}

static int block_worker(const struct lu_layout *lay, int bi, int bj)
{
    return (block_owner(lay, bi, bj) + lay->shift) % lay->nproc;
}

/* Total order of blocks first, first + step, ...: a local matrix's rows or columns. */
static int local_extent(const struct lu_layout *lay, int first, int step)
{
    int total = 0;
    for (int b = first; b < lay->nblk; b += step)
        total += blk_order(lay, b);
    return total;
}

/* Leading dimension of the local matrix holding block row bi. */
static int local_ld(const struct lu_layout *lay, int bi)
{
    return local_extent(lay, bi % lay->pr, lay->pr);
}

/* The squarest grid: pr the largest divisor of nproc not above its square root. */
static struct lu_layout make_layout(const struct lu_options *opt)
{
    struct lu_layout lay = {.n = opt->n, .nb = opt->nb, .shift = opt->shift};
    lay.nblk = (opt->n + opt->nb - 1) / opt->nb;
    lay.nproc = armci_msg_nproc();
    lay.me = armci_msg_me();
    lay.pr = 1;
    for (int d = 1; d * d <= lay.nproc; d++)
        if (lay.nproc % d == 0)
            lay.pr = d;
    lay.pc = lay.nproc / lay.pr;
    return lay;
}

/* ---- block transfers ------------------------------------------------------------------- */

/* Block (bi, bj) as a 1-level strided region: order(bi) doubles per column, order(bj) columns. */
struct block_region {
    int proc;
    void *addr;
    int stride;   /* bytes between columns at the owner */
    int count[2]; /* bytes per column, columns */
};

static struct block_region block_region(const struct lu_matrix *a, int bi, int bj)
{
    const struct lu_layout *lay = &a->lay;
    struct block_region r;
    int ld = local_ld(lay, bi);
    size_t elem = (size_t)(bj / lay->pc) * lay->nb * ld + (size_t)(bi / lay->pr) * lay->nb;
    r.proc = block_owner(lay, bi, bj);
    r.addr = app_remote_addr(a->bases, r.proc, elem * sizeof(double));
    r.stride = ld * (int)sizeof(double);
    r.count[0] = blk_order(lay, bi) * (int)sizeof(double);
    r.count[1] = blk_order(lay, bj);
    return r;
}

/* Copies block (bi, bj) into buf, packed column-major (leading dimension = its rows). */
static void get_block(const struct lu_matrix *a, int bi, int bj, double *buf)
{
    struct block_region r = block_region(a, bi, bj);
    int packed = r.count[0];
    if (ARMCI_GetS(r.addr, &r.stride, buf, &packed, r.count, 1, r.proc) != 0)
        app_die("ARMCI_GetS of block (%d,%d) from %d failed", bi, bj, r.proc);
}

static void put_block(const struct lu_matrix *a, int bi, int bj, double *buf)
{
    struct block_region r = block_region(a, bi, bj);
    int packed = r.count[0];
    if (ARMCI_PutS(buf, &packed, r.addr, &r.stride, r.count, 1, r.proc) != 0)
        app_die("ARMCI_PutS of block (%d,%d) to %d failed", bi, bj, r.proc);
}

/* Fetches block (bi, bj) into slot unless the slot already holds it for this step. */
static const double *cached_block(const struct lu_matrix *a, int bi, int bj, double *slot,
                                  int *slot_step, int step)
{
    if (*slot_step != step + 1) {
        get_block(a, bi, bj, slot);
        *slot_step = step + 1;
    }
    return slot;
}

/* ---- dense kernels on packed column-major blocks --------------------------------------- */

/* In place a = L U (L unit lower, U upper) of an m x m block, without pivoting. */
static void factor_block(double *a, int m)
{
    for (int k = 0; k < m; k++) {
        double pivot = a[k + k * m];
        for (int i = k + 1; i < m; i++)
            a[i + k * m] /= pivot;
        for (int j = k + 1; j < m; j++) {
            double ukj = a[k + j * m];
            for (int i = k + 1; i < m; i++)
                a[i + j * m] -= a[i + k * m] * ukj;
        }
    }
}

/* b (m x ncols) := L^-1 b, L the unit lower triangle of the factored m x m block lu. */
static void solve_unit_lower(const double *lu, int m, double *b, int ncols)
{
    for (int j = 0; j < ncols; j++) {
        double *col = b + (size_t)j * m;
        for (int k = 0; k < m; k++)
            for (int i = k + 1; i < m; i++)
                col[i] -= lu[i + k * m] * col[k];
    }
}

/* b (nrows x m) := b U^-1, U the upper triangle of the factored m x m block lu. */
static void solve_upper_right(const double *lu, int m, double *b, int nrows)
{
    for (int j = 0; j < m; j++) {
        double *col = b + (size_t)j * nrows;
        for (int k = 0; k < j; k++) {
            const double *done = b + (size_t)k * nrows;
            double ukj = lu[k + j * m];
            for (int i = 0; i < nrows; i++)
                col[i] -= done[i] * ukj;
        }
        for (int i = 0; i < nrows; i++)
            col[i] /= lu[j + j * m];
    }
}

/* c (m x n) += alpha * a (m x kk) * b (kk x n). */
static void gemm_acc(double *c, const double *a, const double *b, int m, int n, int kk,
                     double alpha)
{
    for (int j = 0; j < n; j++) {
        double *cj = c + (size_t)j * m;
        for (int k = 0; k < kk; k++) {
            const double *ak = a + (size_t)k * m;
            double bkj = alpha * b[k + (size_t)j * kk];
            for (int i = 0; i < m; i++)
                cj[i] += ak[i] * bkj;
        }
    }
}

/* Turns a factored m x m block into its unit lower factor L. */
static void keep_unit_lower(double *a, int m)
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i <= j; i++)
            a[i + j * m] = i == j ? 1.0 : 0.0;
}

/* Turns a factored m x m block into its upper factor U. */
static void keep_upper(double *a, int m)
{
    for (int j = 0; j < m; j++)
        for (int i = j + 1; i < m; i++)
            a[i + j * m] = 0.0;
}

/* ---- the matrix ------------------------------------------------------------------------ */

/* Off-diagonal entries in [-0.5, 0.5) and n on the diagonal: strictly diagonally dominant. */
static double matrix_entry(long seed, int n, int i, int j)
{
    if (i == j)
        return n;
    return app_noise((uint64_t)seed, (uint64_t)i << 32 | (uint32_t)j);
}

static void generate_block(const struct lu_layout *lay, long seed, int bi, int bj, double *buf)
{
    int m = blk_order(lay, bi), n = blk_order(lay, bj);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            buf[i + (size_t)j * m] = matrix_entry(seed, lay->n, bi * lay->nb + i, bj * lay->nb + j);
}

static struct lu_matrix lu_create(const struct lu_options *opt)
{
    struct lu_matrix a = {.lay = make_layout(opt)};
    const struct lu_layout *lay = &a.lay;
    size_t rows = (size_t)local_extent(lay, lay->me / lay->pc, lay->pr);
    size_t cols = (size_t)local_extent(lay, lay->me % lay->pc, lay->pc);
    a.bytes = rows * cols * sizeof(double);
    a.bases = app_malloc_global(a.bytes);
    return a;
}

static void lu_destroy(struct lu_matrix *a)
{
    app_free_global(a->bases);
    a->bases = NULL;
}

/* Each owner writes its blocks of A; collective. */
static void lu_fill(const struct lu_matrix *a, long seed, struct lu_work *w)
{
    const struct lu_layout *lay = &a->lay;
    for (int bj = 0; bj < lay->nblk; bj++)
        for (int bi = 0; bi < lay->nblk; bi++)
            if (block_owner(lay, bi, bj) == lay->me) {
                generate_block(lay, seed, bi, bj, w->block);
                put_block(a, bi, bj, w->block);
            }
    ARMCI_Barrier();
}

static struct lu_work work_create(const struct lu_layout *lay)
{
    size_t bsz = (size_t)lay->nb * lay->nb;
    struct lu_work w = {.diag_step = 0};
    w.block = app_xmalloc(bsz * sizeof(double));
    w.diag = app_xmalloc(bsz * sizeof(double));
    w.lcol = app_xmalloc(bsz * lay->nblk * sizeof(double));
    w.urow = app_xmalloc(bsz * lay->nblk * sizeof(double));
    w.lcol_step = calloc((size_t)lay->nblk, sizeof(int));
    w.urow_step = calloc((size_t)lay->nblk, sizeof(int));
    if (w.lcol_step == NULL || w.urow_step == NULL)
        app_die("out of memory for the block caches");
    return w;
}

static void work_destroy(struct lu_work *w)
{
    free(w->block);
    free(w->diag);
    free(w->lcol);
    free(w->urow);
    free(w->lcol_step);
    free(w->urow_step);
}

/* ---- factorisation --------------------------------------------------------------------- */

static void factor_diagonal(const struct lu_matrix *a, int k, struct lu_work *w)
{
    if (block_worker(&a->lay, k, k) != a->lay.me)
        return;
    get_block(a, k, k, w->block);
    factor_block(w->block, blk_order(&a->lay, k));
    put_block(a, k, k, w->block);
}

/* L(b,k) = A(b,k) U(k,k)^-1 and U(k,b) = L(k,k)^-1 A(k,b) for the blocks this process does. */
static void solve_panels(const struct lu_matrix *a, int k, struct lu_work *w)
{
    const struct lu_layout *lay = &a->lay;
    int m = blk_order(lay, k);
    for (int b = k + 1; b < lay->nblk; b++) {
        if (block_worker(lay, b, k) == lay->me) {
            const double *diag = cached_block(a, k, k, w->diag, &w->diag_step, k);
            get_block(a, b, k, w->block);
            solve_upper_right(diag, m, w->block, blk_order(lay, b));
            put_block(a, b, k, w->block);
        }
        if (block_worker(lay, k, b) == lay->me) {
            const double *diag = cached_block(a, k, k, w->diag, &w->diag_step, k);
            get_block(a, k, b, w->block);
            solve_unit_lower(diag, m, w->block, blk_order(lay, b));
            put_block(a, k, b, w->block);
        }
    }
}

/* A(bi,bj) -= L(bi,k) U(k,bj); each panel block is fetched once per step. */
static void update_trailing(const struct lu_matrix *a, int k, struct lu_work *w)
{
    const struct lu_layout *lay = &a->lay;
    size_t bsz = (size_t)lay->nb * lay->nb;
    for (int bj = k + 1; bj < lay->nblk; bj++) {
        for (int bi = k + 1; bi < lay->nblk; bi++) {
            if (block_worker(lay, bi, bj) != lay->me)
                continue;
            const double *l = cached_block(a, bi, k, w->lcol + bi * bsz, &w->lcol_step[bi], k);
            const double *u = cached_block(a, k, bj, w->urow + bj * bsz, &w->urow_step[bj], k);
            get_block(a, bi, bj, w->block);
            gemm_acc(w->block, l, u, blk_order(lay, bi), blk_order(lay, bj), blk_order(lay, k),
                     -1.0);
            put_block(a, bi, bj, w->block);
        }
    }
}

/* Collective: overwrites A with its L and U factors. */
static void lu_factor(const struct lu_matrix *a, struct lu_work *w)
{
    for (int k = 0; k < a->lay.nblk; k++) {
        factor_diagonal(a, k, w);
        ARMCI_Barrier();
        solve_panels(a, k, w);
        ARMCI_Barrier();
        update_trailing(a, k, w);
        ARMCI_Barrier();
    }
}

/* ---- verification ---------------------------------------------------------------------- */

/* out := block (bi, bj) of L*U, the sum over k <= min(bi, bj) of L(bi,k) U(k,bj). */
static void product_block(const struct lu_matrix *a, int bi, int bj, struct lu_work *w, double *out)
{
    const struct lu_layout *lay = &a->lay;
    int m = blk_order(lay, bi), n = blk_order(lay, bj);
    int last = bi < bj ? bi : bj;
    memset(out, 0, (size_t)m * n * sizeof(double));
    for (int k = 0; k <= last; k++) {
        int kk = blk_order(lay, k);
        get_block(a, bi, k, w->lcol);
        if (k == bi)
            keep_unit_lower(w->lcol, kk);
        get_block(a, k, bj, w->urow);
        if (k == bj)
            keep_upper(w->urow, kk);
        gemm_acc(out, w->lcol, w->urow, m, n, kk, 1.0);
    }
}

/* Largest |L*U - A| and |A| over one block; updates the running maxima. */
static void compare_block(const struct lu_layout *lay, long seed, int bi, int bj, const double *lu,
                          double *max_err, double *max_a)
{
    int m = blk_order(lay, bi), n = blk_order(lay, bj);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++) {
            double aij = matrix_entry(seed, lay->n, bi * lay->nb + i, bj * lay->nb + j);
            *max_err = fmax(*max_err, fabs(lu[i + (size_t)j * m] - aij));
            *max_a = fmax(*max_a, fabs(aij));
        }
    }
}

/* Collective: max |L*U - A| / max |A| over the whole matrix. */
static double lu_check(const struct lu_matrix *a, long seed, struct lu_work *w)
{
    const struct lu_layout *lay = &a->lay;
    double *prod = app_xmalloc((size_t)lay->nb * lay->nb * sizeof(double));
    double max_err = 0.0, max_a = 0.0;
    for (int bj = 0; bj < lay->nblk; bj++)
        for (int bi = 0; bi < lay->nblk; bi++)
            if (block_owner(lay, bi, bj) == lay->me) {
                product_block(a, bi, bj, w, prod);
                compare_block(lay, seed, bi, bj, prod, &max_err, &max_a);
            }
    free(prod);
    max_err = app_max_over_procs(max_err);
    max_a = app_max_over_procs(max_a);
    return max_err / max_a;
}

/* ---- driver ---------------------------------------------------------------------------- */

static void report(const struct lu_layout *lay, double seconds, double rel_err, double tol,
                   int pass, uint64_t digest)
{
    if (lay->me != 0)
        return;
    double gflops = 2.0 / 3.0 * lay->n * (double)lay->n * lay->n / seconds * 1e-9;
    printf("LU factorisation, n=%d nb=%d on a %dx%d grid (%d processes, shift %d)\n", lay->n,
           lay->nb, lay->pr, lay->pc, lay->nproc, lay->shift);
    printf("  time %.4f s, %.3f GFlop/s; max |LU - A| / max |A| = %.3e (tolerance %.3e): %s\n",
           seconds, gflops, rel_err, tol, pass ? "PASS" : "FAIL");
    printf("RESULT app=lu procs=%d n=%d nb=%d grid=%dx%d shift=%d time_s=%.6f gflops=%.4f "
           "rel_err=%.3e digest=%016" PRIx64 " check=%s\n",
           lay->nproc, lay->n, lay->nb, lay->pr, lay->pc, lay->shift, seconds, gflops, rel_err,
           digest, pass ? "PASS" : "FAIL");
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    struct lu_options opt = parse_options(argc, argv);
    struct lu_matrix a = lu_create(&opt);
    struct lu_work w = work_create(&a.lay);
    lu_fill(&a, opt.seed, &w);

    double t0 = app_now();
    lu_factor(&a, &w);
    double seconds = app_max_over_procs(app_now() - t0);

    /* Backward error of LU without pivoting on a diagonally dominant matrix is a few ulps
     * of max|A|; a lost or doubled block update shows up many orders of magnitude higher. */
    double tol = 16.0 * opt.n * DBL_EPSILON;
    double rel_err = lu_check(&a, opt.seed, &w);
    int pass = rel_err <= tol;
    /* The factors: every block's updates come in the same order in any run. */
    uint64_t digest = app_digest(a.bases[a.lay.me], a.bytes);
    report(&a.lay, seconds, rel_err, tol, pass, digest);

    work_destroy(&w);
    lu_destroy(&a);
    ARMCI_Finalize();
    return pass ? 0 : 1;
}
