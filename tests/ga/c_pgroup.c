/*
 * GA suite, C: processor groups.
 *
 * GA_Pgroup_create is collective over all processes, members or not: it
 * creates the ARMCI group on every process, so non-members hold a handle
 * to a group they are not in (GA_Pgroup_nodeid answers -1 for them). The
 * even ranks and the odd ranks form two groups, and {0, last} a third that
 * spans both virtual nodes at np4x2. Members check GA_Pgroup_nnodes,
 * GA_Pgroup_nodeid and GA_Pgroup_absolute_id, reduce with
 * GA_Pgroup_dgop/_igop/_lgop/_zgop ("+", "max", "min", "absmax"),
 * broadcast with GA_Pgroup_brdcst, and build arrays on their group
 * (NGA_Create_config) that they put to, accumulate into and read-increment,
 * synchronized by GA_Pgroup_sync only; then they make the group the default
 * (GA_Pgroup_set_default: GA_Nnodes, GA_Nodeid, GA_Sync, GA_Dgop and
 * NGA_Create all act on it) and go back to the world group. GA_Pgroup_split
 * divides the world into halves. Every value is checked against what the
 * membership implies; finally the groups are destroyed, collectively.
 */
#include "gacheck.h"

#include <stdio.h>
#include <string.h>

#define R 10
#define C 7

/* Checks the group's identity as seen by a member at index idx of list. */
static void check_membership(int grp, const int *list, int size, const char *what)
{
    int idx = -1;
    for (int i = 0; i < size; i++)
        if (list[i] == gat_me)
            idx = i;
    if (idx < 0) {
        EXPECT(GA_Pgroup_nodeid(grp) == -1, "%s: non-member %d has group id %d", what, gat_me,
               GA_Pgroup_nodeid(grp));
        return;
    }
    EXPECT(GA_Pgroup_nnodes(grp) == size, "%s: GA_Pgroup_nnodes = %d, expected %d", what,
           GA_Pgroup_nnodes(grp), size);
    EXPECT(GA_Pgroup_nodeid(grp) == idx, "%s: GA_Pgroup_nodeid = %d, expected %d", what,
           GA_Pgroup_nodeid(grp), idx);
    for (int i = 0; i < size; i++)
        EXPECT(GA_Pgroup_absolute_id(grp, i) == list[i],
               "%s: GA_Pgroup_absolute_id(%d) = %d, "
               "expected %d",
               what, i, GA_Pgroup_absolute_id(grp, i), list[i]);
}

/* Collective work of the members of one group. */
static void member_work(int grp, const int *list, int size, const char *what)
{
    int idx = GA_Pgroup_nodeid(grp);

    /* reductions */
    double d[3] = {gat_me + 1.0, -(double)gat_me, gat_me % 3 - 1.0};
    int i2[2] = {gat_me, 1};
    long l[2] = {(long)gat_me << 36, -(long)gat_me};
    DoubleComplex z[1] = {{gat_me, -1.0}};
    double dmax[1] = {-(double)gat_me * gat_me}, dmin[1] = {(double)gat_me};
    double dabs[1] = {-(double)gat_me - 1};
    GA_Pgroup_dgop(grp, d, 3, "+");
    GA_Pgroup_igop(grp, i2, 2, "+");
    GA_Pgroup_lgop(grp, l, 2, "+");
    GA_Pgroup_zgop(grp, z, 1, "+");
    GA_Pgroup_dgop(grp, dmax, 1, "max");
    GA_Pgroup_dgop(grp, dmin, 1, "min");
    GA_Pgroup_dgop(grp, dabs, 1, "absmax");
    double ed[3] = {0, 0, 0}, emax = -1e300, emin = 1e300, eabs = 0;
    long esum = 0;
    for (int i = 0; i < size; i++) {
        int p = list[i];
        ed[0] += p + 1.0, ed[1] -= p, ed[2] += p % 3 - 1.0;
        esum += p;
        emax = -(double)p * p > emax ? -(double)p * p : emax;
        emin = p < emin ? p : emin;
        eabs = p + 1 > eabs ? p + 1 : eabs;
    }
    for (int k = 0; k < 3; k++)
        EXPECT(d[k] == ed[k], "%s: GA_Pgroup_dgop + [%d] = %g, expected %g", what, k, d[k], ed[k]);
    EXPECT(i2[0] == esum && i2[1] == size, "%s: GA_Pgroup_igop + = %d %d, expected %ld %d", what,
           i2[0], i2[1], esum, size);
    EXPECT(l[0] == esum << 36 && l[1] == -esum, "%s: GA_Pgroup_lgop + = %ld %ld", what, l[0], l[1]);
    EXPECT(z[0].real == esum && z[0].imag == -size, "%s: GA_Pgroup_zgop + = (%g,%g)", what,
           z[0].real, z[0].imag);
    EXPECT(dmax[0] == emax, "%s: GA_Pgroup_dgop max = %g, expected %g", what, dmax[0], emax);
    EXPECT(dmin[0] == emin, "%s: GA_Pgroup_dgop min = %g, expected %g", what, dmin[0], emin);
    EXPECT(dabs[0] == eabs, "%s: GA_Pgroup_dgop absmax = %g, expected %g", what, dabs[0], eabs);

    /* broadcast from the group's last member (group numbering) */
    char msg[40];
    memset(msg, 0, sizeof(msg));
    if (idx == size - 1)
        snprintf(msg, sizeof(msg), "from %d of %s", gat_me, what);
    GA_Pgroup_brdcst(grp, msg, (int)sizeof(msg), size - 1);
    char want[40];
    memset(want, 0, sizeof(want));
    snprintf(want, sizeof(want), "from %d of %s", list[size - 1], what);
    EXPECT(memcmp(msg, want, sizeof(msg)) == 0, "%s: GA_Pgroup_brdcst got \"%s\"", what, msg);

    /* an array of the group: put rows round robin, accumulate, read-increment */
    int dims[2] = {R, C};
    int g = NGA_Create_config(C_DBL, 2, dims, "group array", NULL, grp);
    EXPECT(g != 0, "%s: NGA_Create_config failed", what);
    GA_Zero(g);
    GA_Pgroup_sync(grp);
    for (int i = idx; i < R; i += size) {
        double row[C];
        for (int j = 0; j < C; j++)
            row[j] = i * 10 + j + list[0];
        int lo[2] = {i, 0}, hi[2] = {i, C - 1}, ld[1] = {C};
        NGA_Put(g, lo, hi, row, ld);
    }
    GA_Pgroup_sync(grp);
    double all[R * C], ones[R * C];
    int lo[2] = {0, 0}, hi[2] = {R - 1, C - 1}, ld[1] = {C};
    NGA_Get(g, lo, hi, all, ld);
    int bad = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            bad += all[i * C + j] != i * 10 + j + list[0];
    EXPECT(bad == 0, "%s: group array put/get: %d wrong", what, bad);
    GA_Pgroup_sync(grp);
    for (int k = 0; k < R * C; k++)
        ones[k] = 1;
    double alpha = idx + 1;
    NGA_Acc(g, lo, hi, ones, ld, &alpha);
    GA_Pgroup_sync(grp);
    NGA_Get(g, lo, hi, all, ld);
    bad = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            bad += all[i * C + j] != i * 10 + j + list[0] + size * (size + 1) / 2.0;
    EXPECT(bad == 0, "%s: group array acc: %d wrong", what, bad);

    int one_dim[1] = {1};
    int gc = NGA_Create_config(C_INT, 1, one_dim, "group counter", NULL, grp);
    GA_Zero(gc);
    GA_Pgroup_sync(grp);
    int zero[1] = {0};
    long t = NGA_Read_inc(gc, zero, 1) + NGA_Read_inc(gc, zero, 1);
    GA_Pgroup_lgop(grp, &t, 1, "+");
    EXPECT(t == (long)(2 * size) * (2 * size - 1) / 2, "%s: tickets sum to %ld", what, t);
    GA_Pgroup_sync(grp);
    GA_Destroy(gc);
    GA_Destroy(g);

    /* the group as default group */
    GA_Pgroup_set_default(grp);
    EXPECT(GA_Nnodes() == size && GA_Nodeid() == idx, "%s: default group %d/%d, expected %d/%d",
           what, GA_Nodeid(), GA_Nnodes(), idx, size);
    int gd = NGA_Create(C_DBL, 2, dims, "default group array", NULL);
    GA_Zero(gd);
    GA_Sync();
    int at[2] = {idx % R, idx % C};
    double v = 1;
    NGA_Acc(gd, at, at, &v, ld, &v);
    GA_Sync();
    double s = GA_Ddot(gd, gd), es = 0;
    for (int k = 0; k < R * C; k++) {
        int cnt = 0;
        for (int m = 0; m < size; m++)
            cnt += (m % R) * C + m % C == k;
        es += (double)cnt * cnt;
    }
    EXPECT(s == es, "%s: GA_Ddot on the default group = %g, expected %g", what, s, es);
    double x = 2;
    GA_Dgop(&x, 1, "+");
    EXPECT(x == 2.0 * size, "%s: GA_Dgop on the default group = %g", what, x);
    GA_Sync();
    GA_Destroy(gd);
    GA_Pgroup_set_default(GA_Pgroup_get_world());
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    int np = gat_nproc, even[4], odd[4], ends[2] = {0, np - 1};
    int ne = 0, no = 0;
    for (int p = 0; p < np; p++) {
        if (p % 2 == 0)
            even[ne++] = p;
        else
            odd[no++] = p;
    }
    /* created by everybody, members or not */
    int g_even = GA_Pgroup_create(even, ne);
    int g_odd = no > 0 ? GA_Pgroup_create(odd, no) : -1;
    int g_ends = np > 1 ? GA_Pgroup_create(ends, 2) : -1;
    check_membership(g_even, even, ne, "even");
    if (g_odd >= 0)
        check_membership(g_odd, odd, no, "odd");
    if (g_ends >= 0)
        check_membership(g_ends, ends, 2, "ends");

    if (gat_me % 2 == 0)
        member_work(g_even, even, ne, "even");
    else
        member_work(g_odd, odd, no, "odd");
    GA_Sync();
    if (g_ends >= 0 && (gat_me == 0 || gat_me == np - 1))
        member_work(g_ends, ends, 2, "ends");
    GA_Sync();

    /* split the world into halves of consecutive ranks */
    int halves = np > 1 ? 2 : 1;
    int g_half = GA_Pgroup_split(GA_Pgroup_get_world(), halves);
    int hsize = (np + halves - 1) / halves, first = gat_me / hsize * hsize;
    int hcount = np - first < hsize ? np - first : hsize;
    EXPECT(GA_Pgroup_nnodes(g_half) == hcount && GA_Pgroup_nodeid(g_half) == gat_me - first,
           "GA_Pgroup_split: %d of %d, expected %d of %d", GA_Pgroup_nodeid(g_half),
           GA_Pgroup_nnodes(g_half), gat_me - first, hcount);
    int r[1] = {gat_me};
    GA_Pgroup_igop(g_half, r, 1, "+");
    EXPECT(r[0] == hcount * first + hcount * (hcount - 1) / 2, "split group sum = %d", r[0]);
    GA_Pgroup_sync(g_half);

    /* the world group is unaffected */
    GA_Sync();
    double w = 1;
    GA_Dgop(&w, 1, "+");
    EXPECT(w == np, "world GA_Dgop after the groups = %g", w);
    if (g_ends >= 0)
        EXPECT(GA_Pgroup_destroy(g_ends), "GA_Pgroup_destroy(ends) failed");
    if (g_odd >= 0)
        EXPECT(GA_Pgroup_destroy(g_odd), "GA_Pgroup_destroy(odd) failed");
    EXPECT(GA_Pgroup_destroy(g_even), "GA_Pgroup_destroy(even) failed");
    return gat_finish("c_pgroup");
}
