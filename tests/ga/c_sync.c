/*
 * GA suite, C: atomics, mutexes, fences and non-blocking transfers.
 *
 * - NGA_Read_inc on C_INT and C_LONG counters (ARMCI_FETCH_AND_ADD and
 *   _LONG), one counter per process so that most increments go to another
 *   process (another node at np4x2); every ticket must be drawn exactly once
 *   (local histograms summed with GA_Igop) and the counters end at the total.
 * - GA_Create_mutexes / GA_Lock / GA_Unlock around a get-increment-put of
 *   shared counters, with GA_Init_fence/GA_Fence so the put is complete
 *   before the unlock: no increment may be lost.
 * - NGA_NbPut, NGA_NbGet and NGA_NbAcc with several requests outstanding at
 *   once, completed by NGA_NbWait or by polling NGA_NbTest, each aimed at
 *   another process's block.
 * - GA_Sync as the only ordering between a phase of puts and the reads.
 */
#include "gacheck.h"

#include <sched.h>
#include <string.h>

#define TICKETS 24 /* read-increments per process and counter type */
#define ROUNDS  12 /* locked increments per process and mutex */
#define NMUTEX  3
#define R       24 /* rows of the non-blocking array */
#define C       20 /* columns */

static void test_read_inc(int type)
{
    int dims[1] = {gat_nproc};
    int g = NGA_Create(type, 1, dims, type == C_INT ? "int counters" : "long counters", NULL);
    GA_Zero(g);
    GA_Sync();
    /* counter c gets TICKETS increments of 1 from each process, in turns */
    int total = gat_nproc * TICKETS, *hist = gat_malloc(sizeof(int) * (size_t)gat_nproc * total);
    memset(hist, 0, sizeof(int) * (size_t)gat_nproc * total);
    for (int t = 0; t < TICKETS * gat_nproc; t++) {
        int c = (gat_me + t) % gat_nproc, sub[1] = {c};
        long got = NGA_Read_inc(g, sub, 1);
        if (got >= 0 && got < total)
            hist[c * total + got]++;
        else
            EXPECT(0, "NGA_Read_inc on counter %d returned %ld", c, got);
    }
    GA_Igop(hist, gat_nproc * total, "+");
    int bad = 0;
    for (int k = 0; k < gat_nproc * total; k++)
        bad += hist[k] != 1;
    EXPECT(bad == 0, "%s NGA_Read_inc: %d tickets not drawn exactly once",
           type == C_INT ? "int" : "long", bad);
    free(hist);
    GA_Sync();
    for (int c = 0; c < gat_nproc; c++) {
        int sub[1] = {c}, ld[1] = {1};
        long v;
        if (type == C_INT) {
            int iv;
            NGA_Get(g, sub, sub, &iv, ld);
            v = iv;
        } else {
            NGA_Get(g, sub, sub, &v, ld);
        }
        EXPECT(v == total, "counter %d = %ld, expected %d", c, v, total);
    }
    /* a long counter beyond 32 bits: the fetched values need all 64
       (the increment itself is an int in ARMCI_Rmw, hence small) */
    if (type == C_LONG) {
        const long base = (1L << 33) + 7;
        int sub[1] = {gat_nproc - 1}, ld[1] = {1};
        GA_Sync();
        if (gat_me == 0)
            NGA_Put(g, sub, sub, (void *)&base, ld);
        GA_Sync();
        long before = NGA_Read_inc(g, sub, 1000);
        EXPECT(before >= base && (before - base) % 1000 == 0 && before < base + 1000L * gat_nproc,
               "NGA_Read_inc above 2^33 returned %ld", before);
        GA_Sync();
        long v;
        NGA_Get(g, sub, sub, &v, ld);
        EXPECT(v == base + 1000L * gat_nproc, "long counter = %ld, expected %ld", v,
               base + 1000L * gat_nproc);
    }
    GA_Sync();
    GA_Destroy(g);
}

static void test_mutexes(void)
{
    int dims[1] = {NMUTEX};
    int g = NGA_Create(C_LONG, 1, dims, "locked counters", NULL);
    GA_Zero(g);
    EXPECT(GA_Create_mutexes(NMUTEX), "GA_Create_mutexes(%d) failed", NMUTEX);
    GA_Sync();
    for (int r = 0; r < ROUNDS; r++)
        for (int m = 0; m < NMUTEX; m++) {
            int sub[1] = {m}, ld[1] = {1};
            long v;
            GA_Lock(m);
            GA_Init_fence();
            NGA_Get(g, sub, sub, &v, ld);
            sched_yield(); /* widen the window another process would race into */
            v++;
            NGA_Put(g, sub, sub, &v, ld);
            GA_Fence();
            GA_Unlock(m);
        }
    GA_Sync();
    long v[NMUTEX];
    int lo[1] = {0}, hi[1] = {NMUTEX - 1}, ld[1] = {1};
    NGA_Get(g, lo, hi, v, ld);
    for (int m = 0; m < NMUTEX; m++)
        EXPECT(v[m] == (long)ROUNDS * gat_nproc, "counter under mutex %d = %ld, expected %ld", m,
               v[m], (long)ROUNDS * gat_nproc);
    GA_Sync();
    EXPECT(GA_Destroy_mutexes(), "GA_Destroy_mutexes failed");
    GA_Destroy(g);
}

static double nbval(int i, int j)
{
    return (double)((5 * i + 3 * j) % 17 - 8);
}

/* Block of rows [r0, r1] of process p's share: rows split evenly. */
static void rows_of(int p, int *r0, int *r1)
{
    *r0 = R * p / gat_nproc;
    *r1 = R * (p + 1) / gat_nproc - 1;
}

static void test_nonblocking(void)
{
    int dims[2] = {R, C};
    int g = NGA_Create(C_DBL, 2, dims, "nb", NULL);
    GA_Zero(g);
    GA_Sync();
    /* put the rows of the next process's share in 4 column pieces, all outstanding */
    int p = (gat_me + 1) % gat_nproc, r0, r1;
    rows_of(p, &r0, &r1);
    double *buf = gat_malloc(sizeof(double) * (size_t)R * C);
    for (int i = r0; i <= r1; i++)
        for (int j = 0; j < C; j++)
            buf[(i - r0) * C + j] = nbval(i, j);
    ga_nbhdl_t h[4];
    for (int q = 0; q < 4; q++) {
        int lo[2] = {r0, q * C / 4}, hi[2] = {r1, (q + 1) * C / 4 - 1}, ld[1] = {C};
        NGA_NbPut(g, lo, hi, buf + lo[1], ld, &h[q]);
    }
    for (int q = 0; q < 4; q++)
        NGA_NbWait(&h[q]);
    GA_Sync();

    /* get the whole array in 4 row pieces, all outstanding, poll with NbTest */
    double *all = gat_malloc(sizeof(double) * (size_t)R * C);
    memset(all, 0, sizeof(double) * (size_t)R * C);
    for (int q = 0; q < 4; q++) {
        int lo[2] = {q * R / 4, 0}, hi[2] = {(q + 1) * R / 4 - 1, C - 1}, ld[1] = {C};
        NGA_NbGet(g, lo, hi, all + lo[0] * C, ld, &h[q]);
    }
    for (int q = 0; q < 4; q++) {
        long spins = 0;
        while (!NGA_NbTest(&h[q]) && ++spins < 100000000L)
            ;
        EXPECT(spins < 100000000L, "NGA_NbTest never reported request %d complete", q);
        if (spins >= 100000000L)
            NGA_NbWait(&h[q]); /* GA frees a handle once NbTest reports it complete */
    }
    int bad = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            bad += all[i * C + j] != nbval(i, j);
    EXPECT(bad == 0, "NGA_NbPut/NGA_NbGet: %d wrong elements", bad);
    GA_Sync();

    /* every process accumulates 2 * value into the whole array, two requests */
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            buf[i * C + j] = nbval(i, j);
    double two = 2.0;
    int lo1[2] = {0, 0}, hi1[2] = {R / 2 - 1, C - 1}, lo2[2] = {R / 2, 0}, hi2[2] = {R - 1, C - 1};
    int ld[1] = {C};
    NGA_NbAcc(g, lo1, hi1, buf, ld, &two, &h[0]);
    NGA_NbAcc(g, lo2, hi2, buf + (R / 2) * C, ld, &two, &h[1]);
    NGA_NbWait(&h[1]);
    NGA_NbWait(&h[0]);
    GA_Sync();
    int lo[2] = {0, 0}, hi[2] = {R - 1, C - 1};
    NGA_Get(g, lo, hi, all, ld);
    bad = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            bad += all[i * C + j] != (1 + 2 * gat_nproc) * nbval(i, j);
    EXPECT(bad == 0, "NGA_NbAcc: %d wrong elements", bad);
    free(all);
    free(buf);
    GA_Sync();
    GA_Destroy(g);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_read_inc(C_INT);
    test_read_inc(C_LONG);
    test_mutexes();
    test_nonblocking();
    return gat_finish("c_sync");
}
