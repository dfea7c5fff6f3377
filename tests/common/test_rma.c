/*
 * Byte-exact one-sided operations between every pair of processes:
 *   - random-size, random-offset put/get (blocking, Nb, aggregate) from
 *     ARMCI memory, ARMCI_Malloc_local memory and plain malloc'd memory,
 *     each verified by reading back, and finally by the owner itself;
 *   - all ranks accumulating into the same elements, all six types;
 *   - an Rmw counter that must hand out every value exactly once;
 *   - a lock-protected read-modify-write counter;
 *   - fences seen from the target: put, accumulate, fence, then an MPI
 *     message; the target finds the data in its memory.
 * Run single-node (suite core) or across virtual nodes (suite internode).
 * Usage: test_rma [max_bytes] [iterations]
 */
#include <complex.h>
#include <sched.h>
#include <mpi.h>
#include <string.h>

#include "testutil.h"

static int me, nproc;
static size_t slice;       /* bytes each writer owns in every target's block */
static void **seg;         /* the shared block of each process */
static unsigned char *mal; /* plain malloc memory */
static unsigned char *loc; /* ARMCI_Malloc_local memory */
static unsigned char *own; /* my own ARMCI block (a local buffer too) */

static unsigned char *local_buffer(int kind)
{
    return kind == 0 ? mal : kind == 1 ? loc : own + (size_t)me * slice; /* my slice of myself */
}

static size_t random_size(uint64_t *rs, size_t max)
{
    /* Log-uniform: small and large sizes are both well covered. */
    int bits = 0;
    while (((size_t)1 << bits) < max)
        bits++;
    size_t n = (size_t)1 << (test_rand(rs) % (bits + 1));
    n = n / 2 + test_rand(rs) % (n / 2 + 1);
    return n < 1 ? 1 : n > max ? max : n;
}

static void test_put_get(size_t max_bytes, int iters)
{
    uint64_t rs = 0x1234567ULL + (uint64_t)me * 7919;
    unsigned char *check = malloc(slice);
    for (int it = 0; it < iters; it++) {
        int target = (me + 1 + it) % nproc;
        size_t n = random_size(&rs, max_bytes - 1);
        size_t off = test_rand(&rs) % (slice - n); /* odd offsets happen */
        int src_kind = it % 3, dst_kind = (it / 3) % 3;
        uint64_t seed = ((uint64_t)me << 40) ^ ((uint64_t)it << 8) ^ 0xA5;
        unsigned char *src = local_buffer(src_kind);
        if (src_kind == 2 && target == me)
            src = mal; /* never copy a range onto itself */
        fill_pattern(src, n, seed);
        unsigned char *dst = (unsigned char *)seg[target] + (size_t)me * slice + off;

        armci_hdl_t h;
        switch (it % 4) {
        case 0:
            ARMCI_Put(src, dst, (int)n, target);
            break;
        case 1:
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbPut(src, dst, (int)n, target, &h);
            ARMCI_Wait(&h);
            break;
        case 2:
            ARMCI_NbPut(src, dst, (int)n, target, NULL);
            ARMCI_WaitAll();
            break;
        default:
            /* Two halves through one aggregate handle. */
            ARMCI_INIT_HANDLE(&h);
            ARMCI_SET_AGGREGATE_HANDLE(&h);
            ARMCI_NbPut(src, dst, (int)(n / 2), target, &h);
            ARMCI_NbPut(src + n / 2, dst + n / 2, (int)(n - n / 2), target, &h);
            ARMCI_Wait(&h);
            ARMCI_UNSET_AGGREGATE_HANDLE(&h);
            break;
        }
        /* Blocking put returns when src is reusable: clobbering it must not matter. */
        memset(src, 0xEE, n);
        ARMCI_Fence(target);

        unsigned char *back = dst_kind == 0 ? check : local_buffer(dst_kind);
        if (back == src || (dst_kind == 2 && target == me))
            back = check;
        memset(back, 0, n);
        if (it % 2) {
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbGet(dst, back, (int)n, target, &h);
            ARMCI_Wait(&h);
        } else {
            ARMCI_Get(dst, back, (int)n, target);
        }
        long bad = check_pattern(back, n, seed);
        CHECK(bad < 0,
              "put/get of %zu bytes at offset %zu to %d (iteration %d, src kind %d): "
              "byte %ld differs",
              n, off, target, it, src_kind, bad);
    }
    free(check);

    /* Each writer fills its whole slice in every process; the owner checks by load. */
    for (int t = 0; t < nproc; t++) {
        int target = (me + t) % nproc;
        uint64_t seed = 0xC0FFEEULL ^ ((uint64_t)me << 20) ^ (uint64_t)target;
        fill_pattern(mal, slice, seed);
        size_t done = 0;
        while (done < slice) {
            size_t n = random_size(&rs, slice - done);
            ARMCI_Put(mal + done, (unsigned char *)seg[target] + (size_t)me * slice + done, (int)n,
                      target);
            done += n;
        }
    }
    ARMCI_Barrier();
    for (int w = 0; w < nproc; w++) {
        uint64_t seed = 0xC0FFEEULL ^ ((uint64_t)w << 20) ^ (uint64_t)me;
        long bad = check_pattern((unsigned char *)seg[me] + (size_t)w * slice, slice, seed);
        CHECK(bad < 0, "slice written by %d: byte %ld differs", w, bad);
    }
    ARMCI_Barrier();
}

#define ACC_N 515 /* elements per type: odd, spans several cache lines */

static void test_accumulate(int rounds)
{
    void **acc = malloc(sizeof(void *) * nproc);
    ARMCI_Malloc(acc, 6 * ACC_N * 16);
    memset(acc[me], 0, 6 * ACC_N * 16);
    ARMCI_Barrier();

    int iscale = 3;
    long lscale = 5;
    float fscale = 0.5f;
    double dscale = 0.25;
    float complex cscale = 2.0f + 1.0f * I;
    double complex zscale = 1.0 - 2.0 * I;
    int ib[ACC_N];
    long lb[ACC_N];
    float fb[ACC_N];
    double db[ACC_N];
    float complex cb[ACC_N];
    double complex zb[ACC_N];
    /* Small integers and dyadic fractions: every partial sum is exact in any order. */
    for (int i = 0; i < ACC_N; i++) {
        ib[i] = (me + 1) * (i % 7 + 1);
        lb[i] = (long)(me + 1) * (i % 11 + 1) * 1000003L;
        fb[i] = (float)((me + 1) * (i % 5 + 1));
        db[i] = (me + 1) * (i % 13 + 1) * 0.125;
        cb[i] = (float)(me + 1) + (float)(i % 3) * I;
        zb[i] = (double)(i % 9) - (double)(me + 1) * I;
    }
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < nproc; k++) {
            int t = (me + k) % nproc;
            char *base = acc[t];
            ARMCI_Acc(ARMCI_ACC_INT, &iscale, ib, base, sizeof(ib), t);
            ARMCI_Acc(ARMCI_ACC_LNG, &lscale, lb, base + ACC_N * 16, sizeof(lb), t);
            ARMCI_Acc(ARMCI_ACC_FLT, &fscale, fb, base + 2 * ACC_N * 16, sizeof(fb), t);
            armci_hdl_t h;
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbAcc(ARMCI_ACC_DBL, &dscale, db, base + 3 * ACC_N * 16, sizeof(db), t, &h);
            ARMCI_Wait(&h);
            ARMCI_Acc(ARMCI_ACC_CPL, &cscale, cb, base + 4 * ACC_N * 16, sizeof(cb), t);
            ARMCI_NbAcc(ARMCI_ACC_DCP, &zscale, zb, base + 5 * ACC_N * 16, sizeof(zb), t, NULL);
        }
    }
    ARMCI_Barrier();

    /* Sum over ranks of (rank + 1) is s1; all contributions are linear in it. */
    double s1 = (double)nproc * (nproc + 1) / 2.0;
    char *base = acc[me];
    for (int i = 0; i < ACC_N; i++) {
        int iv = ((int *)base)[i];
        long lv = ((long *)(base + ACC_N * 16))[i];
        float fv = ((float *)(base + 2 * ACC_N * 16))[i];
        double dv = ((double *)(base + 3 * ACC_N * 16))[i];
        float complex cv = ((float complex *)(base + 4 * ACC_N * 16))[i];
        double complex zv = ((double complex *)(base + 5 * ACC_N * 16))[i];
        CHECK(iv == rounds * iscale * (int)s1 * (i % 7 + 1), "int acc [%d] = %d", i, iv);
        CHECK(lv == rounds * lscale * (long)s1 * (i % 11 + 1) * 1000003L, "long acc [%d]", i);
        CHECK(fv == rounds * fscale * (float)s1 * (i % 5 + 1), "float acc [%d] = %g", i, fv);
        CHECK(dv == rounds * dscale * s1 * (i % 13 + 1) * 0.125, "double acc [%d] = %g", i, dv);
        float complex cexp = rounds * cscale * ((float)s1 + (float)(nproc * (i % 3)) * I);
        CHECK(cv == cexp, "complex acc [%d] = %g%+gi", i, crealf(cv), cimagf(cv));
        double complex zexp = rounds * zscale * ((double)(nproc * (i % 9)) - s1 * I);
        CHECK(zv == zexp, "double complex acc [%d] = %g%+gi", i, creal(zv), cimag(zv));
    }
    ARMCI_Barrier();
    ARMCI_Free(acc[me]);
    free(acc);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Like GA's NGA_Read_inc: a shared counter hands out each value exactly once. */
static void test_rmw_counter(int per_rank)
{
    void **ctr = malloc(sizeof(void *) * nproc);
    ARMCI_Malloc(ctr, 2 * sizeof(long));
    memset(ctr[me], 0, 2 * sizeof(long));
    ARMCI_Barrier();
    int host = nproc - 1;
    long *got = malloc(sizeof(long) * per_rank * 2);
    for (int i = 0; i < per_rank; i++) {
        int v;
        long lv;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &v, ctr[host], 1, host);
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &lv, (long *)ctr[host] + 1, 1, host);
        got[i] = v;
        got[per_rank + i] = lv;
    }
    long *all = malloc(sizeof(long) * per_rank * 2 * nproc);
    MPI_Allgather(got, per_rank * 2, MPI_LONG, all, per_rank * 2, MPI_LONG, MPI_COMM_WORLD);
    for (int kind = 0; kind < 2; kind++) {
        long *vals = malloc(sizeof(long) * per_rank * nproc);
        for (int r = 0; r < nproc; r++)
            memcpy(vals + r * per_rank, all + (size_t)r * per_rank * 2 + kind * per_rank,
                   sizeof(long) * per_rank);
        qsort(vals, (size_t)per_rank * nproc, sizeof(long), cmp_long);
        for (long i = 0; i < (long)per_rank * nproc; i++)
            CHECK(vals[i] == i, "%s counter handed out %ld at position %ld", kind ? "long" : "int",
                  vals[i], i);
        free(vals);
    }

    /* Swap: everyone swaps its rank in; the values seen form a permutation. */
    ARMCI_Barrier();
    if (me == host)
        *(int *)ctr[host] = -1;
    ARMCI_Barrier();
    int mine = me;
    ARMCI_Rmw(ARMCI_SWAP, &mine, ctr[host], 0, host);
    int *seen = malloc(sizeof(int) * (nproc + 1));
    MPI_Allgather(&mine, 1, MPI_INT, seen, 1, MPI_INT, MPI_COMM_WORLD);
    ARMCI_Barrier();
    seen[nproc] = ARMCI_GetValueInt(ctr[host], host);
    long sum = 0;
    for (int i = 0; i <= nproc; i++)
        sum += seen[i];
    CHECK(sum == (long)nproc * (nproc - 1) / 2 - 1, "swap values are not a permutation");
    free(seen);
    free(all);
    free(got);
    ARMCI_Barrier();
    ARMCI_Free(ctr[me]);
    free(ctr);
}

static void test_locks(int per_rank)
{
    void **ctr = malloc(sizeof(void *) * nproc);
    ARMCI_Malloc(ctr, sizeof(long));
    *(long *)ctr[me] = 0;
    ARMCI_Create_mutexes(2);
    ARMCI_Barrier();
    int host = nproc - 1;
    for (int i = 0; i < per_rank; i++) {
        ARMCI_Lock(1, host);
        long v = ARMCI_GetValueLong(ctr[host], host);
        ARMCI_PutValueLong(v + 1, ctr[host], host);
        ARMCI_Fence(host);
        ARMCI_Unlock(1, host);
    }
    ARMCI_Barrier();
    if (me == host)
        CHECK(*(long *)ctr[host] == (long)per_rank * nproc, "locked counter is %ld, want %ld",
              *(long *)ctr[host], (long)per_rank * nproc);
    ARMCI_Destroy_mutexes();
    ARMCI_Free(ctr[me]);
    free(ctr);
}

/*
 * A fence seen from the target. The writer (a different process each round) sends every other
 * process a large non-blocking put, a small put and an accumulate, fences them
 * (ARMCI_Fence(p) and ARMCI_AllFence in turn) and then tells each target by an MPI message;
 * the target, on receiving it, finds everything in its own memory. Under deferred completions
 * (SOFTIB_DEFERRED=1) a write runs only when the writer polls: without the fence the message
 * arrives first.
 */
static void test_fence_order(int rounds)
{
    if (nproc < 2)
        return;
    enum { N = 16384, WORD = N / 8, COUNT = N / 8 + 1 };
    void **mem = malloc(sizeof(void *) * nproc);
    ARMCI_Malloc(mem, N + 2 * sizeof(long));
    memset(mem[me], 0, N + 2 * sizeof(long));
    unsigned char *out = malloc((size_t)N * nproc);
    armci_hdl_t *h = malloc(sizeof(armci_hdl_t) * nproc);
    long accs = 0; /* accumulates fenced into my memory so far */
    ARMCI_Barrier();
    for (int r = 1; r <= rounds; r++) {
        int writer = r % nproc;
        if (me == writer) {
            long one = 1, value = r;
            /* The accumulates first: waiting for a send polls, and a poll runs every write
             * posted before it. The puts are left to the fence. */
            for (int p = 0; p < nproc; p++)
                if (p != me)
                    ARMCI_Acc(ARMCI_ACC_LNG, &one, &one, (long *)mem[p] + COUNT, sizeof(long), p);
            for (int p = 0; p < nproc; p++) {
                if (p == me)
                    continue;
                fill_pattern(out + (size_t)p * N, N, (uint64_t)(r * 131 + p));
                ARMCI_INIT_HANDLE(&h[p]);
                ARMCI_NbPut(out + (size_t)p * N, mem[p], N, p, &h[p]);
                ARMCI_Put(&value, (long *)mem[p] + WORD, sizeof(long), p); /* inline: no wait */
            }
            if (r % 2) {
                for (int p = 0; p < nproc; p++)
                    if (p != me)
                        ARMCI_Fence(p);
            } else {
                ARMCI_AllFence();
            }
            for (int p = 0; p < nproc; p++)
                if (p != me)
                    MPI_Send(&r, 1, MPI_INT, p, 77, MPI_COMM_WORLD);
            /* No ARMCI call (it would poll) before every target has looked. */
            MPI_Barrier(MPI_COMM_WORLD);
            for (int p = 0; p < nproc; p++)
                if (p != me)
                    ARMCI_Wait(&h[p]);
        } else {
            int said;
            /* The writer's operations are complete here by now: fenced before this message. */
            MPI_Recv(&said, 1, MPI_INT, writer, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long *words = mem[me];
            long bad = check_pattern(mem[me], N, (uint64_t)(r * 131 + me));
            CHECK(bad < 0 && words[WORD] == r,
                  "round %d: the writer %d fenced and told us, but its put is not here (byte %ld "
                  "differs, word %ld)",
                  r, writer, bad, words[WORD]);
            accs++;
            CHECK(words[COUNT] == accs, "round %d: %ld accumulates fenced here, expected %ld", r,
                  words[COUNT], accs);
            MPI_Barrier(MPI_COMM_WORLD); /* checked before the next writer overwrites it */
        }
    }
    ARMCI_Barrier();
    ARMCI_Free(mem[me]);
    free(mem);
    free(out);
    free(h);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    nproc = armci_msg_nproc();
    size_t max_bytes = argc > 1 ? (size_t)atol(argv[1]) : 65536;
    int iters = argc > 2 ? atoi(argv[2]) : 60;

    slice = max_bytes + 64;
    seg = malloc(sizeof(void *) * nproc);
    ARMCI_Malloc(seg, (armci_size_t)(slice * nproc));
    own = seg[me];
    mal = malloc(slice);
    loc = ARMCI_Malloc_local((armci_size_t)slice);
    CHECK(loc != NULL, "ARMCI_Malloc_local failed");
    ARMCI_Barrier();

    test_put_get(max_bytes, iters);
    test_accumulate(3);
    test_rmw_counter(200);
    test_locks(50);
    test_fence_order(20);

    ARMCI_Free_local(loc);
    free(mal);
    ARMCI_Free(own);
    free(seg);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
