/*
 * GA suite, C: ghost cells and periodic one-sided operations.
 *
 * NGA_Create_ghosts arrays (2-D double with widths 2 x 1, 3-D int with
 * width 1 everywhere) are filled by NGA_Put; GA_Update_ghosts must then
 * leave every ghost cell (corners included) holding the value of the
 * periodically wrapped global element, which NGA_Access_ghosts exposes
 * together with the interior. NGA_Update_ghost_dir refreshes one direction
 * at a time (edges checked after changing the data). GA moves ghost data with strided
 * ARMCI calls (ARMCI_PutS/GetS and armci_read/write_strided for the local
 * part), so this is where a strided copy with its arguments mixed up shows.
 * NGA_Periodic_put/get/acc address patches that run off the array edges
 * and wrap around; the result is checked element by element on a plain
 * array.
 */
#include "gacheck.h"

#include <string.h>

#define N 12
#define M 10

static double dval(int i, int j)
{
    return (double)(i * 100 + j);
}

static int ival(int i, int j, int k)
{
    return i * 10000 + j * 100 + k + 1;
}

static int wrap(int i, int n)
{
    return ((i % n) + n) % n;
}

static void put_all_2d(int g, double add)
{
    /* every process writes a band of rows */
    int r0 = N * gat_me / gat_nproc, r1 = N * (gat_me + 1) / gat_nproc - 1;
    if (r1 < r0)
        return;
    double *buf = gat_malloc(sizeof(double) * (size_t)(r1 - r0 + 1) * M);
    for (int i = r0; i <= r1; i++)
        for (int j = 0; j < M; j++)
            buf[(i - r0) * M + j] = dval(i, j) + add;
    int lo[2] = {r0, 0}, hi[2] = {r1, M - 1}, ld[1] = {M};
    NGA_Put(g, lo, hi, buf, ld);
    free(buf);
}

/*
 * Compares the local block with its ghosts to dval + add of the wrapped
 * index; with edges_only, only the cells outside the block in exactly one
 * dimension (not the corners) are checked.
 */
static void check_ghosts_2d(int g, const int *w, double add, int edges_only, const char *what)
{
    int lo[2], hi[2], gdims[2], ld[1];
    NGA_Distribution(g, gat_me, lo, hi);
    if (hi[0] < lo[0] || hi[1] < lo[1])
        return;
    double *p;
    NGA_Access_ghosts(g, gdims, &p, ld);
    EXPECT(gdims[0] == hi[0] - lo[0] + 1 + 2 * w[0] && gdims[1] == hi[1] - lo[1] + 1 + 2 * w[1],
           "%s: NGA_Access_ghosts dims %dx%d for block %dx%d", what, gdims[0], gdims[1],
           hi[0] - lo[0] + 1, hi[1] - lo[1] + 1);
    int bad = 0, first = 1;
    for (int a = 0; a < gdims[0]; a++)
        for (int b = 0; b < gdims[1]; b++) {
            int i = lo[0] - w[0] + a, j = lo[1] - w[1] + b;
            int out0 = i < lo[0] || i > hi[0], out1 = j < lo[1] || j > hi[1];
            if (edges_only && out0 == out1)
                continue;
            double want = dval(wrap(i, N), wrap(j, M)) + add, got = p[a * ld[0] + b];
            if (got != want) {
                if (first)
                    EXPECT(0, "%s: cell (%d,%d) = %g, expected %g", what, i, j, got, want);
                first = 0;
                bad++;
            }
        }
    NGA_Release_ghosts(g);
    EXPECT(bad == 0, "%s: %d wrong cells", what, bad);
}

static void test_ghosts_2d(void)
{
    int dims[2] = {N, M}, width[2] = {2, 1};
    int g = NGA_Create_ghosts(C_DBL, 2, dims, width, "ghosts 2-D", NULL);
    EXPECT(g != 0 && GA_Has_ghosts(g), "NGA_Create_ghosts failed");
    GA_Zero(g);
    GA_Sync();
    put_all_2d(g, 0.0);
    GA_Sync();
    GA_Update_ghosts(g);
    check_ghosts_2d(g, width, 0.0, 0, "GA_Update_ghosts 2-D");

    /* new data, then the ghosts direction by direction (without corners) */
    GA_Sync();
    put_all_2d(g, 0.5);
    GA_Sync();
    for (int d = 0; d < 2; d++)
        for (int dir = -1; dir <= 1; dir += 2) {
            int ok = NGA_Update_ghost_dir(g, d, dir, 0);
            EXPECT(ok, "NGA_Update_ghost_dir(%d, %d) returned %d", d, dir, ok);
        }
    GA_Sync();
    check_ghosts_2d(g, width, 0.5, 1, "NGA_Update_ghost_dir");
    GA_Sync();
    GA_Destroy(g);
}

static void test_ghosts_3d(void)
{
    enum { A = 6, B = 5, K = 4 };
    int dims[3] = {A, B, K}, width[3] = {1, 1, 1};
    int g = NGA_Create_ghosts(C_INT, 3, dims, width, "ghosts 3-D", NULL);
    EXPECT(g != 0, "NGA_Create_ghosts 3-D failed");
    GA_Zero(g);
    GA_Sync();
    if (gat_me == 0) {
        int *buf = gat_malloc(sizeof(int) * A * B * K);
        for (int i = 0; i < A; i++)
            for (int j = 0; j < B; j++)
                for (int k = 0; k < K; k++)
                    buf[(i * B + j) * K + k] = ival(i, j, k);
        int lo[3] = {0, 0, 0}, hi[3] = {A - 1, B - 1, K - 1}, ld[2] = {B, K};
        NGA_Put(g, lo, hi, buf, ld);
        free(buf);
    }
    GA_Sync();
    GA_Update_ghosts(g);
    int lo[3], hi[3], gd[3], ld[2];
    NGA_Distribution(g, gat_me, lo, hi);
    if (hi[0] >= lo[0] && hi[1] >= lo[1] && hi[2] >= lo[2]) {
        int *p;
        NGA_Access_ghosts(g, gd, &p, ld);
        int bad = 0;
        for (int a = 0; a < gd[0]; a++)
            for (int b = 0; b < gd[1]; b++)
                for (int c = 0; c < gd[2]; c++) {
                    int i = lo[0] - 1 + a, j = lo[1] - 1 + b, k = lo[2] - 1 + c;
                    int want = ival(wrap(i, A), wrap(j, B), wrap(k, K));
                    int got = p[(a * ld[0] + b) * ld[1] + c];
                    if (got != want && bad++ == 0)
                        EXPECT(0, "3-D ghost (%d,%d,%d) = %d, expected %d", i, j, k, got, want);
                }
        NGA_Release_ghosts(g);
        EXPECT(bad == 0, "GA_Update_ghosts 3-D: %d wrong cells", bad);
    }
    GA_Sync();
    GA_Destroy(g);
}

/* Patch rows [-3, 4] x columns [M - 4, M + 2]: wraps in both dimensions. */
static void test_periodic(void)
{
    int dims[2] = {N, M};
    int g = NGA_Create(C_DBL, 2, dims, "periodic", NULL);
    GA_Zero(g);
    GA_Sync();
    enum { PR = 8, PC = 7 };
    int lo[2] = {-3, M - 4}, hi[2] = {4, M + 2}, ld[1] = {PC};
    double buf[PR * PC];
    if (gat_me == gat_nproc - 1) {
        for (int a = 0; a < PR; a++)
            for (int b = 0; b < PC; b++)
                buf[a * PC + b] = 1000 + a * PC + b;
        NGA_Periodic_put(g, lo, hi, buf, ld);
    }
    GA_Sync();
    /* what each element of the plain array must hold */
    double want[N][M];
    memset(want, 0, sizeof(want));
    for (int a = 0; a < PR; a++)
        for (int b = 0; b < PC; b++)
            want[wrap(lo[0] + a, N)][wrap(lo[1] + b, M)] = 1000 + a * PC + b;
    double all[N * M];
    int alo[2] = {0, 0}, ahi[2] = {N - 1, M - 1}, ald[1] = {M};
    NGA_Get(g, alo, ahi, all, ald);
    int bad = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            bad += all[i * M + j] != want[i][j];
    EXPECT(bad == 0, "NGA_Periodic_put: %d wrong elements", bad);

    memset(buf, 0, sizeof(buf));
    NGA_Periodic_get(g, lo, hi, buf, ld);
    bad = 0;
    for (int a = 0; a < PR; a++)
        for (int b = 0; b < PC; b++)
            bad += buf[a * PC + b] != 1000 + a * PC + b;
    EXPECT(bad == 0, "NGA_Periodic_get: %d wrong elements", bad);
    GA_Sync();

    /* every process accumulates 3 * (a + b) over the same wrapped patch */
    for (int a = 0; a < PR; a++)
        for (int b = 0; b < PC; b++)
            buf[a * PC + b] = a + b;
    double three = 3.0;
    NGA_Periodic_acc(g, lo, hi, buf, ld, &three);
    GA_Sync();
    NGA_Get(g, alo, ahi, all, ald);
    for (int a = 0; a < PR; a++)
        for (int b = 0; b < PC; b++)
            want[wrap(lo[0] + a, N)][wrap(lo[1] + b, M)] += 3.0 * gat_nproc * (a + b);
    bad = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            bad += all[i * M + j] != want[i][j];
    EXPECT(bad == 0, "NGA_Periodic_acc: %d wrong elements", bad);
    GA_Sync();
    GA_Destroy(g);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_periodic();
    test_ghosts_2d();
    test_ghosts_3d();
    return gat_finish("c_ghosts");
}
