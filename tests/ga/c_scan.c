/*
 * GA suite, C: GA's "sparse" 1-D toolkit: enumerate, segmented scans,
 * pack/unpack, and GA's local sort helper.
 *
 * GA_Patch_enum fills a patch with start + k * inc (int, long, double).
 * GA_Scan_add (inclusive and exclusive) and GA_Scan_copy work on segments
 * that a bit mask (an int array) starts; segments cross process boundaries,
 * which GA reconciles with gathers, locates and gops. GA_Pack compresses
 * the elements whose mask bit is set into a dense array and returns the
 * count, GA_Unpack scatters them back. Every result is compared with a
 * sequential computation of the same thing. ga_sort_permutation is the
 * heap sort GA uses to order scatter/gather requests by owner (it is an
 * exported helper of libga; ga_sort_scat runs inside the 2-D ga_scatter of
 * f_scatter.F90); it is checked on one process's keys.
 */
#include "gacheck.h"

#include <string.h>

#define L 53 /* not a multiple of any process count */

extern void ga_sort_permutation(Integer *pn, Integer *index, Integer *base);

static int is_start(int i)
{
    return i == 0 || i % 7 == 0 || i == 10 || i == 11 || i == L - 1;
}

static double sval(int i)
{
    return (double)(i % 9 - 3);
}

static int make_1d(int type, const char *name)
{
    int dims[1] = {L};
    int g = NGA_Create(type, 1, dims, (char *)name, NULL);
    EXPECT(g != 0, "creating %s failed", name);
    return g;
}

static void fill_mask(int g_m)
{
    if (gat_me == 0) {
        int m[L], lo[1] = {0}, hi[1] = {L - 1}, ld[1] = {1};
        for (int i = 0; i < L; i++)
            m[i] = is_start(i) ? 1 + i % 3 : 0; /* any non-zero marks a start */
        NGA_Put(g_m, lo, hi, m, ld);
    }
    GA_Sync();
}

static void test_enum(void)
{
    int g_i = make_1d(C_INT, "enum int"), g_l = make_1d(C_LONG, "enum long");
    int g_d = make_1d(C_DBL, "enum double");
    GA_Zero(g_i);
    GA_Zero(g_l);
    GA_Zero(g_d);
    int istart = -20, iinc = 3;
    long lstart = 1L << 36, linc = -(1L << 33);
    double dstart = 2.5, dinc = -0.5;
    GA_Patch_enum(g_i, 5, L - 6, &istart, &iinc);
    GA_Patch_enum(g_l, 0, L - 1, &lstart, &linc);
    GA_Patch_enum(g_d, 1, L - 1, &dstart, &dinc);
    GA_Sync();
    int iv[L];
    long lv[L];
    double dv[L];
    int lo[1] = {0}, hi[1] = {L - 1}, ld[1] = {1};
    NGA_Get(g_i, lo, hi, iv, ld);
    NGA_Get(g_l, lo, hi, lv, ld);
    NGA_Get(g_d, lo, hi, dv, ld);
    for (int i = 0; i < L; i++) {
        int ei = i >= 5 && i <= L - 6 ? istart + (i - 5) * iinc : 0;
        long el = lstart + i * linc;
        double ed = i >= 1 ? dstart + (i - 1) * dinc : 0.0;
        EXPECT(iv[i] == ei, "GA_Patch_enum int [%d] = %d, expected %d", i, iv[i], ei);
        EXPECT(lv[i] == el, "GA_Patch_enum long [%d] = %ld, expected %ld", i, lv[i], el);
        EXPECT(dv[i] == ed, "GA_Patch_enum double [%d] = %g, expected %g", i, dv[i], ed);
    }
    GA_Sync();
    GA_Destroy(g_d);
    GA_Destroy(g_l);
    GA_Destroy(g_i);
}

static void put_source(int g, int type)
{
    if (gat_me == gat_nproc - 1) {
        int lo[1] = {0}, hi[1] = {L - 1}, ld[1] = {1};
        if (type == C_DBL) {
            double v[L];
            for (int i = 0; i < L; i++)
                v[i] = sval(i);
            NGA_Put(g, lo, hi, v, ld);
        } else {
            int v[L];
            for (int i = 0; i < L; i++)
                v[i] = (int)sval(i);
            NGA_Put(g, lo, hi, v, ld);
        }
    }
    GA_Sync();
}

static void get_as_double(int g, int type, double *out)
{
    int lo[1] = {0}, hi[1] = {L - 1}, ld[1] = {1};
    if (type == C_DBL) {
        NGA_Get(g, lo, hi, out, ld);
    } else {
        int v[L];
        NGA_Get(g, lo, hi, v, ld);
        for (int i = 0; i < L; i++)
            out[i] = v[i];
    }
}

static void test_scans(int type)
{
    const char *tn = type == C_DBL ? "double" : "int";
    int g_src = make_1d(type, "scan src"), g_dst = make_1d(type, "scan dst");
    int g_m = make_1d(C_INT, "scan mask");
    GA_Zero(g_m);
    GA_Zero(g_dst);
    fill_mask(g_m);
    put_source(g_src, type);

    for (int excl = 0; excl <= 1; excl++) {
        GA_Zero(g_dst);
        GA_Scan_add(g_src, g_dst, g_m, 0, L - 1, excl);
        GA_Sync();
        double got[L], sum = 0;
        get_as_double(g_dst, type, got);
        for (int i = 0; i < L; i++) {
            if (is_start(i))
                sum = 0;
            double want = excl ? sum : sum + sval(i);
            sum += sval(i);
            EXPECT(got[i] == want, "GA_Scan_add %s excl=%d [%d] = %g, expected %g", tn, excl, i,
                   got[i], want);
        }
    }

    GA_Zero(g_dst);
    GA_Scan_copy(g_src, g_dst, g_m, 0, L - 1);
    GA_Sync();
    double got[L], seg = 0;
    get_as_double(g_dst, type, got);
    for (int i = 0; i < L; i++) {
        if (is_start(i))
            seg = sval(i);
        EXPECT(got[i] == seg, "GA_Scan_copy %s [%d] = %g, expected %g", tn, i, got[i], seg);
    }

    /* pack the elements at segment starts, then unpack them into zeros */
    int nstart = 0;
    for (int i = 0; i < L; i++)
        nstart += is_start(i);
    int g_p = make_1d(type, "packed");
    GA_Zero(g_p);
    int count = -1;
    GA_Pack(g_src, g_p, g_m, 0, L - 1, &count);
    GA_Sync();
    EXPECT(count == nstart, "GA_Pack %s count = %d, expected %d", tn, count, nstart);
    get_as_double(g_p, type, got);
    for (int i = 0, k = 0; i < L; i++)
        if (is_start(i)) {
            EXPECT(got[k] == sval(i), "GA_Pack %s [%d] = %g, expected %g", tn, k, got[k], sval(i));
            k++;
        }
    for (int k = nstart; k < L; k++)
        EXPECT(got[k] == 0, "GA_Pack %s wrote [%d] = %g past the count", tn, k, got[k]);

    GA_Zero(g_dst);
    count = -1;
    GA_Unpack(g_p, g_dst, g_m, 0, L - 1, &count);
    GA_Sync();
    EXPECT(count == nstart, "GA_Unpack %s count = %d, expected %d", tn, count, nstart);
    get_as_double(g_dst, type, got);
    for (int i = 0; i < L; i++) {
        double want = is_start(i) ? sval(i) : 0;
        EXPECT(got[i] == want, "GA_Unpack %s [%d] = %g, expected %g", tn, i, got[i], want);
    }
    GA_Sync();
    GA_Destroy(g_p);
    GA_Destroy(g_m);
    GA_Destroy(g_dst);
    GA_Destroy(g_src);
}

static void test_sort_permutation(void)
{
    enum { K = 40 };
    Integer n = K, index[K], base[K];
    for (int k = 0; k < K; k++) {
        index[k] = k;
        base[k] = (Integer)((k * 17 + gat_me * 5) % 23); /* duplicates too */
    }
    ga_sort_permutation(&n, index, base);
    int seen[K] = {0}, order = 0;
    for (int k = 0; k < K; k++) {
        if (index[k] >= 0 && index[k] < K)
            seen[index[k]]++;
        if (k > 0 && base[k - 1] > base[k])
            order++;
    }
    int dup = 0;
    for (int k = 0; k < K; k++)
        dup += seen[k] != 1;
    EXPECT(order == 0, "ga_sort_permutation: keys not sorted at %d places", order);
    EXPECT(dup == 0, "ga_sort_permutation: index is not a permutation (%d wrong)", dup);
    for (int k = 0; k < K; k++)
        EXPECT(base[k] == (Integer)((index[k] * 17 + gat_me * 5) % 23),
               "ga_sort_permutation: key %d does not belong to index %ld", k, (long)index[k]);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_enum();
    test_scans(C_DBL);
    test_scans(C_INT);
    test_sort_permutation();
    return gat_finish("c_scan");
}
