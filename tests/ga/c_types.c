/*
 * GA suite, C: every element type through the one-sided paths, on arrays
 * with an irregular distribution.
 *
 * For each of C_INT, C_LONG, C_FLOAT, C_DBL, C_SCPL and C_DCPL it creates a
 * 2-D array with NGA_Create_irreg (uneven blocks, so owner boundaries fall
 * where a regular split would not put them), checks NGA_Distribution and
 * NGA_Locate against the map, then: NGA_Put by row bands that cross owners,
 * NGA_Get of the whole array and of an inner patch with a padded leading
 * dimension, NGA_Acc from every process with a per-type alpha (complex
 * alphas too), GA_Duplicate + GA_Compare_distr + GA_Copy, GA_Fill, GA_Zero,
 * NGA_Strided_put/get/acc with skips in both dimensions, and NGA_Access on
 * the local block. Each type has its own accumulate kernel in ARMCI
 * (ARMCI_ACC_INT .. ARMCI_ACC_DCP, and long); long values exceed 32 bits so
 * a truncation shows. All values are small integers (times 2^33 for long),
 * so every comparison is exact.
 */
#include "gacheck.h"

#include <stdio.h>
#include <string.h>

#define N 13 /* rows */
#define M 10 /* columns */

static const int types[] = {C_INT, C_LONG, C_FLOAT, C_DBL, C_SCPL, C_DCPL};
static const char *type_names[] = {"int", "long", "float", "double", "scomplex", "dcomplex"};

static const char *tname(int type)
{
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
        if (types[t] == type)
            return type_names[t];
    return "?";
}

/* A complex value as two doubles; real types use re only. */
typedef struct {
    double re, im;
} val_t;

static int is_complex(int type)
{
    return type == C_SCPL || type == C_DCPL;
}

static size_t elem_size(int type)
{
    switch (type) {
    case C_INT:
        return sizeof(int);
    case C_LONG:
        return sizeof(long);
    case C_FLOAT:
        return sizeof(float);
    case C_DBL:
        return sizeof(double);
    case C_SCPL:
        return sizeof(SingleComplex);
    default:
        return sizeof(DoubleComplex);
    }
}

static void put_val(int type, void *buf, size_t k, val_t v)
{
    switch (type) {
    case C_INT:
        ((int *)buf)[k] = (int)v.re;
        break;
    case C_LONG:
        ((long *)buf)[k] = (long)v.re;
        break;
    case C_FLOAT:
        ((float *)buf)[k] = (float)v.re;
        break;
    case C_DBL:
        ((double *)buf)[k] = v.re;
        break;
    case C_SCPL:
        ((SingleComplex *)buf)[k].real = (float)v.re;
        ((SingleComplex *)buf)[k].imag = (float)v.im;
        break;
    default:
        ((DoubleComplex *)buf)[k].real = v.re;
        ((DoubleComplex *)buf)[k].imag = v.im;
    }
}

static val_t get_val(int type, const void *buf, size_t k)
{
    val_t v = {0, 0};
    switch (type) {
    case C_INT:
        v.re = ((const int *)buf)[k];
        break;
    case C_LONG:
        v.re = (double)((const long *)buf)[k];
        break;
    case C_FLOAT:
        v.re = ((const float *)buf)[k];
        break;
    case C_DBL:
        v.re = ((const double *)buf)[k];
        break;
    case C_SCPL:
        v.re = ((const SingleComplex *)buf)[k].real;
        v.im = ((const SingleComplex *)buf)[k].imag;
        break;
    default:
        v.re = ((const DoubleComplex *)buf)[k].real;
        v.im = ((const DoubleComplex *)buf)[k].imag;
    }
    return v;
}

/* Element (i, j): small integers of both signs; long ones beyond 32 bits. */
static val_t value(int type, int i, int j)
{
    val_t v = {(double)((7 * i + 3 * j) % 13 - 6), 0.0};
    if (is_complex(type))
        v.im = (double)((2 * i + 5 * j) % 9 - 4);
    if (type == C_LONG)
        v.re *= 8589934592.0; /* 2^33 */
    return v;
}

/* alpha for NGA_Acc/NGA_Strided_acc of each type, with its value. */
static void make_alpha(int type, void *alpha, val_t *a)
{
    a->re = 2;
    a->im = is_complex(type) ? -1 : 0;
    put_val(type, alpha, 0, *a);
}

static val_t cmul(val_t a, val_t b)
{
    val_t r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

static int same(val_t a, val_t b)
{
    return a.re == b.re && a.im == b.im;
}

/* Expected value at (i, j) of the current phase. */
typedef val_t (*expect_fn)(int type, int i, int j);

static val_t phase_alpha; /* the accumulate phase: v + nproc * alpha * v */

static val_t expect_plain(int type, int i, int j)
{
    return value(type, i, j);
}

static val_t expect_acc(int type, int i, int j)
{
    val_t v = value(type, i, j), av = cmul(phase_alpha, v);
    val_t r = {v.re + gat_nproc * av.re, v.im + gat_nproc * av.im};
    return r;
}

/* Reads rows r0..r1 x columns c0..c1 (padded ld) and compares with want(). */
static void check_patch(int g, int type, int r0, int r1, int c0, int c1, expect_fn want,
                        const char *what)
{
    int w = c1 - c0 + 1, ld = w + 3;
    size_t es = elem_size(type);
    char *buf = gat_malloc(es * (size_t)(r1 - r0 + 1) * ld);
    memset(buf, 0x5a, es * (size_t)(r1 - r0 + 1) * ld);
    int lo[2] = {r0, c0}, hi[2] = {r1, c1}, ldv[1] = {ld};
    NGA_Get(g, lo, hi, buf, ldv);
    int wrong = 0;
    for (int i = r0; i <= r1; i++)
        for (int j = c0; j <= c1; j++) {
            val_t got = get_val(type, buf, (size_t)(i - r0) * ld + (j - c0));
            val_t exp = want(type, i, j);
            if (!same(got, exp) && wrong++ == 0)
                EXPECT(0, "%s %s: (%d,%d) = (%g,%g), expected (%g,%g)", tname(type), what, i, j,
                       got.re, got.im, exp.re, exp.im);
        }
    EXPECT(wrong == 0, "%s %s: %d wrong elements", tname(type), what, wrong);
    free(buf);
}

/* Process grid and irregular block boundaries for nproc processes. */
static void make_map(int *block, int *map)
{
    static const int rows4[] = {0, 4}, cols4[] = {0, 7};
    if (gat_nproc >= 4) {
        block[0] = 2, block[1] = 2;
        map[0] = rows4[0], map[1] = rows4[1], map[2] = cols4[0], map[3] = cols4[1];
    } else if (gat_nproc >= 2) {
        block[0] = 2, block[1] = 1;
        map[0] = 0, map[1] = 9, map[2] = 0;
    } else {
        block[0] = 1, block[1] = 1;
        map[0] = 0, map[1] = 0;
    }
}

/* Distribution and locate agree with the map the array was created with. */
static void check_distribution(int g, const int *block, const int *map)
{
    int nblocks = block[0] * block[1], used[4] = {0, 0, 0, 0};
    for (int p = 0; p < gat_nproc; p++) {
        int lo[2], hi[2];
        NGA_Distribution(g, p, lo, hi);
        if (p >= nblocks) {
            EXPECT(hi[0] < lo[0] || hi[1] < lo[1], "process %d owns no block but got [%d:%d,%d:%d]",
                   p, lo[0], hi[0], lo[1], hi[1]);
            continue;
        }
        /* which block of the map is it? (GA chooses the block order) */
        int found = 0;
        for (int bi = 0; bi < block[0]; bi++)
            for (int bj = 0; bj < block[1]; bj++) {
                int elo0 = map[bi], ehi0 = bi + 1 < block[0] ? map[bi + 1] - 1 : N - 1;
                int elo1 = map[block[0] + bj];
                int ehi1 = bj + 1 < block[1] ? map[block[0] + bj + 1] - 1 : M - 1;
                if (lo[0] == elo0 && hi[0] == ehi0 && lo[1] == elo1 && hi[1] == ehi1) {
                    found = 1;
                    used[bi * block[1] + bj]++;
                }
            }
        EXPECT(found, "distribution of %d: [%d:%d,%d:%d] is not a block of the map", p, lo[0],
               hi[0], lo[1], hi[1]);
        int corner[2] = {hi[0], lo[1]};
        int owner = NGA_Locate(g, corner);
        EXPECT(owner == p, "NGA_Locate(%d,%d) = %d, expected %d", corner[0], corner[1], owner, p);
    }
    for (int b = 0; b < nblocks; b++)
        EXPECT(used[b] == 1, "block %d of the map owned %d times", b, used[b]);
}

/* This process writes rows me, me + nproc, ... in bands of 3 rows. */
static void put_bands(int g, int type)
{
    size_t es = elem_size(type);
    char *buf = gat_malloc(es * 3 * M);
    for (int r0 = 3 * gat_me; r0 < N; r0 += 3 * gat_nproc) {
        int r1 = r0 + 2 < N ? r0 + 2 : N - 1;
        for (int i = r0; i <= r1; i++)
            for (int j = 0; j < M; j++)
                put_val(type, buf, (size_t)(i - r0) * M + j, value(type, i, j));
        int lo[2] = {r0, 0}, hi[2] = {r1, M - 1}, ld[1] = {M};
        NGA_Put(g, lo, hi, buf, ld);
    }
    free(buf);
}

static void test_strided(int g, int type)
{
    size_t es = elem_size(type);
    /* every 2nd row from 1, every 3rd column from 0: 6 x 4 elements */
    int lo[2] = {1, 0}, hi[2] = {N - 1, M - 1}, skip[2] = {2, 3}, ld[1] = {4};
    int nr = (N - 1 - 1) / 2 + 1, nc = (M - 1) / 3 + 1;
    char *buf = gat_malloc(es * (size_t)nr * nc);
    GA_Zero(g);
    GA_Sync();
    if (gat_me == 0) {
        for (int a = 0; a < nr; a++)
            for (int b = 0; b < nc; b++)
                put_val(type, buf, (size_t)a * nc + b, value(type, 1 + 2 * a, 3 * b));
        NGA_Strided_put(g, lo, hi, skip, buf, ld);
    }
    GA_Sync();
    char alpha[sizeof(DoubleComplex)];
    val_t a;
    make_alpha(type, alpha, &a);
    /* every process accumulates alpha * value onto the same strided elements */
    for (int r = 0; r < nr; r++)
        for (int b = 0; b < nc; b++)
            put_val(type, buf, (size_t)r * nc + b, value(type, 1 + 2 * r, 3 * b));
    NGA_Strided_acc(g, lo, hi, skip, buf, ld, alpha);
    GA_Sync();
    memset(buf, 0, es * (size_t)nr * nc);
    NGA_Strided_get(g, lo, hi, skip, buf, ld);
    int wrong = 0;
    for (int r = 0; r < nr; r++)
        for (int b = 0; b < nc; b++) {
            val_t v = value(type, 1 + 2 * r, 3 * b), av = cmul(a, v);
            val_t exp = {v.re + gat_nproc * av.re, v.im + gat_nproc * av.im};
            val_t got = get_val(type, buf, (size_t)r * nc + b);
            if (!same(got, exp) && wrong++ == 0)
                EXPECT(0, "%s strided: (%d,%d) = (%g,%g), expected (%g,%g)", tname(type), 1 + 2 * r,
                       3 * b, got.re, got.im, exp.re, exp.im);
        }
    EXPECT(wrong == 0, "%s strided: %d wrong elements", tname(type), wrong);
    free(buf);
    /* the elements between the strided ones stay zero */
    char *all = gat_malloc(es * N * M);
    int alo[2] = {0, 0}, ahi[2] = {N - 1, M - 1}, ald[1] = {M};
    NGA_Get(g, alo, ahi, all, ald);
    int touched = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            int on = i % 2 == 1 && j % 3 == 0;
            val_t got = get_val(type, all, (size_t)i * M + j);
            if (!on && (got.re != 0 || got.im != 0))
                touched++;
        }
    EXPECT(touched == 0, "%s strided: %d elements off the stride were written", tname(type),
           touched);
    free(all);
    GA_Sync();
}

/* The local block seen through NGA_Access holds value(i, j). */
static void check_access(int g, int type)
{
    int lo[2], hi[2];
    NGA_Distribution(g, gat_me, lo, hi);
    if (hi[0] < lo[0] || hi[1] < lo[1])
        return;
    void *ptr;
    int ld[1];
    NGA_Access(g, lo, hi, &ptr, ld);
    int wrong = 0;
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            if (!same(get_val(type, ptr, (size_t)(i - lo[0]) * ld[0] + (j - lo[1])),
                      value(type, i, j)))
                wrong++;
    NGA_Release(g, lo, hi);
    EXPECT(wrong == 0, "%s NGA_Access: %d wrong local elements", tname(type), wrong);
}

static void test_type(int type)
{
    int dims[2] = {N, M}, block[2], map[4];
    make_map(block, map);
    char name[32];
    snprintf(name, sizeof(name), "irreg %s", tname(type));
    int g = NGA_Create_irreg(type, 2, dims, name, block, map);
    EXPECT(g != 0, "NGA_Create_irreg(%s) failed", name);
    if (!g)
        return;
    int t, nd, d[2];
    NGA_Inquire(g, &t, &nd, d);
    EXPECT(t == type && nd == 2 && d[0] == N && d[1] == M, "NGA_Inquire: type %d ndim %d %dx%d", t,
           nd, d[0], d[1]);
    check_distribution(g, block, map);

    GA_Zero(g);
    put_bands(g, type);
    GA_Sync();
    check_patch(g, type, 0, N - 1, 0, M - 1, expect_plain, "put/get");
    check_patch(g, type, 2, N - 3, 3, M - 2, expect_plain, "inner patch");
    check_access(g, type);

    /* duplicate: same distribution, then a copy of the contents */
    int g2 = GA_Duplicate(g, "dup");
    EXPECT(g2 != 0, "GA_Duplicate failed");
    EXPECT(GA_Compare_distr(g, g2) == 0, "duplicate has another distribution");
    GA_Zero(g2);
    GA_Copy(g, g2);
    check_patch(g2, type, 0, N - 1, 0, M - 1, expect_plain, "GA_Copy");

    /* every process accumulates alpha * value over the whole array */
    char alpha[sizeof(DoubleComplex)];
    make_alpha(type, alpha, &phase_alpha);
    char *buf = gat_malloc(elem_size(type) * N * M);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            put_val(type, buf, (size_t)i * M + j, value(type, i, j));
    int lo[2] = {0, 0}, hi[2] = {N - 1, M - 1}, ld[1] = {M};
    GA_Sync();
    NGA_Acc(g2, lo, hi, buf, ld, alpha);
    GA_Sync();
    check_patch(g2, type, 0, N - 1, 0, M - 1, expect_acc, "acc");

    /* GA_Fill with -3 (-3 - 2i for complex), then GA_Zero */
    val_t fillv = {-3, is_complex(type) ? -2 : 0};
    put_val(type, buf, 0, fillv);
    GA_Fill(g2, buf);
    NGA_Get(g2, lo, hi, buf, ld);
    int wrong = 0;
    for (int k = 0; k < N * M; k++)
        wrong += !same(get_val(type, buf, (size_t)k), fillv);
    EXPECT(wrong == 0, "%s GA_Fill: %d wrong elements", name, wrong);
    GA_Zero(g2);
    NGA_Get(g2, lo, hi, buf, ld);
    wrong = 0;
    for (int k = 0; k < N * M; k++) {
        val_t v = get_val(type, buf, (size_t)k);
        wrong += v.re != 0 || v.im != 0;
    }
    EXPECT(wrong == 0, "%s GA_Zero: %d wrong elements", name, wrong);
    free(buf);

    test_strided(g2, type);
    GA_Sync();
    GA_Destroy(g2);
    GA_Destroy(g);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
        test_type(types[t]);
    return gat_finish("c_types");
}
