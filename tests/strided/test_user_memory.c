/*
 * Transfers from and to memory ARMCI never allocated (GA's local arrays),
 * large enough to move zero-copy through cached registrations
 * (verbs/reg_cache.h), checked byte for byte:
 *   - GA's shape: 2-D patches of doubles (one stride level, a column per
 *     chunk, the local side packed), put, get and accumulate, blocking and
 *     non-blocking, and a contiguous put and get;
 *   - the classic registration-cache bug: every round frees its buffers and
 *     maps new ones, at the same address where the system gives it back
 *     (munmap + mmap with MAP_FIXED_NOREPLACE, and free + malloc), with
 *     other contents: a registration that still named the old pages would
 *     send the old contents and land data where nobody reads it;
 *   - more buffers in flight than ARMCI_REG_CACHE entries (the meson case
 *     sets 2): non-blocking puts from 5 buffers at once, so a registration
 *     dropped while a request still names it would fail the request.
 * Each rank works with the rank half the job away (another virtual node
 * with ARMCI_NODE_SIZE <= np/2); its partner checks what arrived.
 * Usage: test_user_memory [rounds]
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <string.h>
#include <sys/mman.h>

#include "testutil.h"

#define ROWS     512  /* doubles per column of a patch */
#define COLS     256  /* columns: 1 MiB patches */
#define LD       1024 /* the remote block's leading dimension */
#define BUFFERS  5    /* non-blocking puts in flight at once */
#define SMALL_LD 96   /* a 64 KiB patch: 64 x 128 doubles out of a 96-row local array */

static int me, np, partner;
static double **blocks;
static const size_t patch_bytes = (size_t)ROWS * COLS * sizeof(double);
static const size_t block_bytes = (size_t)LD * COLS * sizeof(double) * (BUFFERS + 1);

static void fill(double *p, size_t n, double seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = seed + (double)(i % 100000);
}

/* The patch of the partner's block that buffer k's data goes to (column-major, LD rows). */
static double *patch_at(double *block, int k)
{
    return block + (size_t)k * LD * COLS;
}

static void check_patch(const double *block, int k, double seed, double scale_add, int line)
{
    const double *p = patch_at((double *)block, k);
    for (int c = 0; c < COLS; c++)
        for (int r = 0; r < ROWS; r++) {
            size_t i = (size_t)c * ROWS + r;
            double want = seed + (double)(i % 100000) + scale_add;
            CHECK(p[(size_t)c * LD + r] == want, "patch %d (line %d) at row %d col %d: %g, want %g",
                  k, line, r, c, p[(size_t)c * LD + r], want);
        }
}

/* A fresh mapping at `hint` if the system lets us have that address again. */
static double *map_at(void *hint, size_t bytes)
{
    void *p = mmap(hint, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    if (p == MAP_FAILED && hint)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu bytes failed", bytes);
    return p;
}

static void patch_desc(int count[2], int lstride[1], int rstride[1])
{
    count[0] = ROWS * (int)sizeof(double);
    count[1] = COLS;
    lstride[0] = ROWS * (int)sizeof(double);
    rstride[0] = LD * (int)sizeof(double);
}

/* Puts from mapped buffers (same addresses every round), some non-blocking at once. */
static int round_puts(double **bufs, int round, int *reused)
{
    int count[2], lstride[1], rstride[1];
    patch_desc(count, lstride, rstride);
    armci_hdl_t h[BUFFERS];
    for (int k = 0; k < BUFFERS; k++) {
        void *old = bufs[k];
        if (old)
            munmap(old, patch_bytes);
        bufs[k] = map_at(old, patch_bytes);
        *reused += old && bufs[k] == old;
        fill(bufs[k], patch_bytes / sizeof(double), 1e6 * round + 1000 * k + me);
        ARMCI_INIT_HANDLE(&h[k]);
        ARMCI_NbPutS(bufs[k], lstride, patch_at(blocks[partner], k), rstride, count, 1, partner,
                     &h[k]);
    }
    for (int k = 0; k < BUFFERS; k++)
        ARMCI_Wait(&h[k]);
    ARMCI_AllFence();
    return BUFFERS;
}

/* What the partner put into my block this round. */
static void check_puts(int round)
{
    for (int k = 0; k < BUFFERS; k++)
        check_patch(blocks[me], k, 1e6 * round + 1000 * k + partner, 0, __LINE__);
}

/* A get into a malloc'd buffer, freed and malloc'd again (often at the same address), twice. */
static void gets_after_free(int round, int *reused)
{
    int count[2], lstride[1], rstride[1];
    patch_desc(count, lstride, rstride);
    size_t n = patch_bytes / sizeof(double);
    double *b = malloc(patch_bytes);
    CHECK(b, "malloc");
    memset(b, 0, patch_bytes);
    ARMCI_GetS(patch_at(blocks[partner], 0), rstride, b, lstride, count, 1, partner);
    double seed = 1e6 * round + me; /* what I put at the partner's patch 0 this round */
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == seed + (double)(i % 100000), "get %zu: %g want %g", i, b[i],
              seed + (double)(i % 100000));
    void *old = b;
    free(b);
    b = malloc(patch_bytes);
    CHECK(b, "malloc");
    *reused += (void *)b == old;
    memset(b, 0xff, patch_bytes);
    /* Non-blocking this time, from patch 1. */
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    ARMCI_NbGetS(patch_at(blocks[partner], 1), rstride, b, lstride, count, 1, partner, &h);
    ARMCI_Wait(&h);
    seed = 1e6 * round + 1000 + me;
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == seed + (double)(i % 100000), "get after free %zu: %g want %g", i, b[i],
              seed + (double)(i % 100000));
    /* And out again with new contents: a contiguous put into patch slot BUFFERS. */
    fill(b, n, 7e6 + 1e3 * round + me);
    ARMCI_Put(b, patch_at(blocks[partner], BUFFERS), (int)patch_bytes, partner);
    free(b);
    ARMCI_AllFence();
}

/* An accumulate of a 64 KiB patch from a local array with its own leading dimension. */
static void small_acc(int round)
{
    int rows = 64, cols = 128;
    double *a = malloc(sizeof(double) * SMALL_LD * cols);
    CHECK(a, "malloc");
    for (int i = 0; i < SMALL_LD * cols; i++)
        a[i] = (double)(round + i % 7);
    int count[2] = {rows * (int)sizeof(double), cols};
    int lstride[1] = {SMALL_LD * (int)sizeof(double)}, rstride[1] = {LD * (int)sizeof(double)};
    double two = 2.0;
    /* Onto patch 2, which holds round's put values. */
    ARMCI_AccS(ARMCI_ACC_DBL, &two, a, lstride, patch_at(blocks[partner], 2), rstride, count, 1,
               partner);
    free(a);
    ARMCI_AllFence();
}

static void check_acc_and_put(int round)
{
    const double *p = patch_at(blocks[me], 2);
    double seed = 1e6 * round + 2000 + partner;
    for (int c = 0; c < COLS; c++)
        for (int r = 0; r < ROWS; r++) {
            size_t i = (size_t)c * ROWS + r;
            double want = seed + (double)(i % 100000);
            if (r < 64 && c < 128)
                want += 2.0 * (double)(round + (c * SMALL_LD + r) % 7);
            CHECK(p[(size_t)c * LD + r] == want, "acc at row %d col %d: %g want %g", r, c,
                  p[(size_t)c * LD + r], want);
        }
    const double *q = patch_at(blocks[me], BUFFERS);
    for (size_t i = 0; i < patch_bytes / sizeof(double); i++)
        CHECK(q[i] == 7e6 + 1e3 * round + partner + (double)(i % 100000),
              "contiguous put after free %zu: %g", i, q[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    np = armci_msg_nproc();
    CHECK(np % 2 == 0, "needs an even number of processes");
    partner = (me + np / 2) % np;
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    blocks = malloc(sizeof(double *) * np);
    ARMCI_Malloc((void **)blocks, (armci_size_t)block_bytes);
    double *bufs[BUFFERS] = {0};
    int mapped_again = 0, malloc_again = 0;
    for (int round = 1; round <= rounds; round++) {
        ARMCI_Barrier();
        round_puts(bufs, round, &mapped_again);
        ARMCI_Barrier();
        check_puts(round);
        ARMCI_Barrier();
        gets_after_free(round, &malloc_again);
        small_acc(round);
        ARMCI_Barrier();
        check_acc_and_put(round);
    }
    for (int k = 0; k < BUFFERS; k++)
        munmap(bufs[k], patch_bytes);
    /* The point of the test is memory reused at the same address: say how often it was. */
    if (me == 0)
        printf("buffers mapped again at the same address: %d of %d, malloc'd again: %d of %d\n",
               mapped_again, BUFFERS * (rounds - 1), malloc_again, rounds);
    CHECK(mapped_again > 0, "no buffer was mapped again at its old address");
    ARMCI_Free(blocks[me]);
    free(blocks);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
