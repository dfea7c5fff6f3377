/*
 * GA suite, C: global reductions and broadcast with the arithmetic ops.
 *
 * GA_Igop, GA_Lgop, GA_Llgop, GA_Fgop and GA_Dgop with every arithmetic op
 * GA knows ("+", "*", "max", "min", "absmax", "absmin"), GA_Gop with the
 * type as an argument, GA_Cgop/GA_Zgop ("+", complex reduced as pairs),
 * a long vector (more than any internal reduction buffer) for "+" and
 * "max", and GA_Brdcst of odd byte counts from every root. Each process
 * contributes values derived from its rank; the expected result is
 * computed locally over all ranks. absmax/absmin return magnitudes, also
 * on one process (ARMCI-MPI and GA's ARMCI agree on that). Long values are
 * scaled by 2^35 so a reduction done in 32 bits shows. The logical and
 * bitwise ops and unterminated op strings are in c_gop_logical.c.
 */
#include "gacheck.h"

#include <string.h>

#define SHORT 7
#define LONGV 20000 /* elements in the long-vector reductions */

static const char *ops[] = {"+", "*", "max", "min", "absmax", "absmin"};
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

/* Rank r's contribution to element k for op o: small integers of both signs. */
static long contribution(int o, int r, int k)
{
    if (o == 1) { /* "*": factors -1, 1, 2 keep the product small */
        static const long f[] = {-1, 1, 2};
        return f[(r + 2 * k) % 3];
    }
    return ((r + 1) * (k + 3) + 2 * r) % 9 - 4;
}

static long combine(int o, long acc, long v)
{
    switch (o) {
    case 0:
        return acc + v;
    case 1:
        return acc * v;
    case 2:
        return v > acc ? v : acc;
    case 3:
        return v < acc ? v : acc;
    case 4:
        v = v < 0 ? -v : v;
        return v > acc ? v : acc;
    default:
        v = v < 0 ? -v : v;
        return v < acc ? v : acc;
    }
}

static long expected(int o, int k)
{
    long acc = contribution(o, 0, k);
    if (o >= 4)
        acc = acc < 0 ? -acc : acc;
    for (int r = 1; r < gat_nproc; r++)
        acc = combine(o, acc, contribution(o, r, k));
    return acc;
}

/* scale for the long types, except for "*" (2^35 squared would overflow) */
static long lscale(int o)
{
    return o == 1 ? 1 : 1L << 35;
}

static void test_ops(void)
{
    for (int o = 0; o < NOPS; o++) {
        int xi[SHORT];
        long xl[SHORT];
        long long xll[SHORT];
        float xf[SHORT];
        double xd[SHORT], xg[SHORT];
        for (int k = 0; k < SHORT; k++) {
            long c = contribution(o, gat_me, k);
            xi[k] = (int)c;
            xl[k] = c * lscale(o);
            xll[k] = (long long)c * lscale(o);
            xf[k] = (float)c;
            xd[k] = (double)c;
            xg[k] = (double)c;
        }
        GA_Igop(xi, SHORT, (char *)ops[o]);
        GA_Lgop(xl, SHORT, (char *)ops[o]);
        GA_Llgop(xll, SHORT, (char *)ops[o]);
        GA_Fgop(xf, SHORT, (char *)ops[o]);
        GA_Dgop(xd, SHORT, (char *)ops[o]);
        GA_Gop(C_DBL, xg, SHORT, (char *)ops[o]);
        for (int k = 0; k < SHORT; k++) {
            long e = expected(o, k);
            EXPECT(xi[k] == e, "GA_Igop %s [%d] = %d, expected %ld", ops[o], k, xi[k], e);
            EXPECT(xl[k] == e * lscale(o), "GA_Lgop %s [%d] = %ld, expected %ld", ops[o], k, xl[k],
                   e * lscale(o));
            EXPECT(xll[k] == (long long)e * lscale(o), "GA_Llgop %s [%d] = %lld, expected %lld",
                   ops[o], k, xll[k], (long long)e * lscale(o));
            EXPECT(xf[k] == (float)e, "GA_Fgop %s [%d] = %g, expected %ld", ops[o], k, xf[k], e);
            EXPECT(xd[k] == (double)e, "GA_Dgop %s [%d] = %g, expected %ld", ops[o], k, xd[k], e);
            EXPECT(xg[k] == (double)e, "GA_Gop(C_DBL) %s [%d] = %g, expected %ld", ops[o], k, xg[k],
                   e);
        }
    }
}

static void test_complex(void)
{
    DoubleComplex z[SHORT];
    SingleComplex c[SHORT];
    for (int k = 0; k < SHORT; k++) {
        z[k].real = gat_me + k;
        z[k].imag = -(double)(gat_me * k);
        c[k].real = (float)(2 * gat_me - k);
        c[k].imag = (float)(gat_me + 1);
    }
    GA_Zgop(z, SHORT, "+");
    GA_Cgop(c, SHORT, "+");
    long sr = (long)gat_nproc * (gat_nproc - 1) / 2; /* sum of ranks */
    for (int k = 0; k < SHORT; k++) {
        double zr = (double)(sr + (long)gat_nproc * k), zi = -(double)(sr * k);
        float cr = (float)(2 * sr - (long)gat_nproc * k), ci = (float)(sr + gat_nproc);
        EXPECT(z[k].real == zr && z[k].imag == zi, "GA_Zgop + [%d] = (%g,%g), expected (%g,%g)", k,
               z[k].real, z[k].imag, zr, zi);
        EXPECT(c[k].real == cr && c[k].imag == ci, "GA_Cgop + [%d] = (%g,%g), expected (%g,%g)", k,
               c[k].real, c[k].imag, cr, ci);
    }
}

static void test_long_vectors(void)
{
    double *d = gat_malloc(sizeof(double) * LONGV);
    int *i = gat_malloc(sizeof(int) * LONGV);
    long *l = gat_malloc(sizeof(long) * LONGV);
    for (int k = 0; k < LONGV; k++) {
        d[k] = (double)((k * 7 + gat_me * 13) % 101);
        i[k] = (k * 7 + gat_me * 13) % 101 - 50;
        l[k] = (long)(k % 17 + gat_me) << 34;
    }
    GA_Dgop(d, LONGV, "+");
    GA_Igop(i, LONGV, "max");
    GA_Lgop(l, LONGV, "+");
    int bad_d = 0, bad_i = 0, bad_l = 0;
    for (int k = 0; k < LONGV; k++) {
        double ed = 0;
        int ei = -1000;
        long el = 0;
        for (int r = 0; r < gat_nproc; r++) {
            ed += (double)((k * 7 + r * 13) % 101);
            int v = (k * 7 + r * 13) % 101 - 50;
            ei = v > ei ? v : ei;
            el += (long)(k % 17 + r) << 34;
        }
        bad_d += d[k] != ed;
        bad_i += i[k] != ei;
        bad_l += l[k] != el;
    }
    EXPECT(bad_d == 0, "GA_Dgop + on %d elements: %d wrong", LONGV, bad_d);
    EXPECT(bad_i == 0, "GA_Igop max on %d elements: %d wrong", LONGV, bad_i);
    EXPECT(bad_l == 0, "GA_Lgop + on %d elements: %d wrong", LONGV, bad_l);
    free(l);
    free(i);
    free(d);
}

static void test_brdcst(void)
{
    for (int root = 0; root < gat_nproc; root++) {
        for (int len = 1; len <= 4099; len += 1366) {
            unsigned char *b = gat_malloc((size_t)len + 1);
            for (int k = 0; k <= len; k++)
                b[k] = (unsigned char)(gat_me == root ? (k * 31 + root) & 0xff : 0xee);
            GA_Brdcst(b, len, root);
            int bad = 0;
            for (int k = 0; k < len; k++)
                bad += b[k] != (unsigned char)((k * 31 + root) & 0xff);
            EXPECT(bad == 0, "GA_Brdcst of %d bytes from %d: %d wrong", len, root, bad);
            EXPECT(b[len] == (unsigned char)(gat_me == root ? (len * 31 + root) & 0xff : 0xee),
                   "GA_Brdcst of %d bytes from %d wrote past the end", len, root);
            free(b);
        }
    }
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_ops();
    test_complex();
    test_long_vectors();
    test_brdcst();
    return gat_finish("c_gop");
}
