/*
 * Strided (PutS/GetS/AccS and Nb forms) and vector (PutV/GetV/AccV)
 * transfers with random shapes (0-4 levels, odd sizes and offsets,
 * different strides on each side) between every pair of processes,
 * checked byte for byte against a mirror the writer keeps locally and
 * updates with a plain reference implementation. Accumulates use every
 * type and a non-trivial scale; values are small integers, so any order
 * of application gives exactly the same result.
 * Usage: test_strided [iterations]
 */
#include <complex.h>
#include <mpi.h>
#include <string.h>

#include "testutil.h"

#define MAXL   4
#define REGION (64 * 1024) /* each writer's region in every process's block */

static int me, n;
static void **blocks;
static uint64_t rs;

struct shape {
    int levels;
    int count[MAXL + 1];
    int rstride[MAXL]; /* remote side */
    int lstride[MAXL]; /* local side */
};

static int rnd(int lo, int hi)
{
    return lo + (int)(test_rand(&rs) % (uint64_t)(hi - lo + 1));
}

static size_t extent(const int *stride, const int *count, int levels)
{
    size_t e = (size_t)count[0];
    for (int i = 0; i < levels; i++)
        e += (size_t)(count[i + 1] - 1) * (size_t)stride[i];
    return e;
}

/* A random shape whose chunks are whole multiples of elem, fitting in `room` bytes on each side. */
static struct shape random_shape(size_t elem, size_t room)
{
    for (;;) {
        struct shape s;
        s.levels = rnd(0, MAXL);
        s.count[0] = (int)elem * rnd(1, elem > 1 ? 24 : 300);
        for (int i = 1; i <= s.levels; i++)
            s.count[i] = rnd(1, 6);
        for (int i = 0; i < s.levels; i++) {
            int below_r = i == 0 ? s.count[0] : s.rstride[i - 1] * s.count[i];
            int below_l = i == 0 ? s.count[0] : s.lstride[i - 1] * s.count[i];
            s.rstride[i] = below_r + (int)elem * rnd(0, 5) + (elem == 1 ? rnd(0, 3) : 0);
            s.lstride[i] = below_l + (int)elem * rnd(0, 7);
        }
        if (extent(s.rstride, s.count, s.levels) <= room &&
            extent(s.lstride, s.count, s.levels) <= room)
            return s;
    }
}

/* Reference strided walk: calls fn for every chunk with its offsets on both sides. */
static void walk(const struct shape *s, int level, size_t roff, size_t loff,
                 void (*fn)(size_t roff, size_t loff, size_t len, void *ctx), void *ctx)
{
    if (level == 0) {
        fn(roff, loff, (size_t)s->count[0], ctx);
        return;
    }
    for (int i = 0; i < s->count[level]; i++)
        walk(s, level - 1, roff + (size_t)i * (size_t)s->rstride[level - 1],
             loff + (size_t)i * (size_t)s->lstride[level - 1], fn, ctx);
}

struct copy_ctx {
    unsigned char *remote_image; /* mirror of the remote region */
    unsigned char *local;
    bool to_remote;
};

static void copy_chunk(size_t roff, size_t loff, size_t len, void *ctx)
{
    struct copy_ctx *c = ctx;
    if (c->to_remote)
        memcpy(c->remote_image + roff, c->local + loff, len);
    else
        memcpy(c->local + loff, c->remote_image + roff, len);
}

static void verify_region(int target, const unsigned char *mirror, const char *what, int it)
{
    static unsigned char back[REGION];
    ARMCI_Get((char *)blocks[target] + (size_t)me * REGION, back, REGION, target);
    for (size_t i = 0; i < REGION; i++)
        CHECK(back[i] == mirror[i], "%s (iteration %d) to %d: byte %zu is %d, expected %d", what,
              it, target, i, back[i], mirror[i]);
}

static void test_puts_gets(unsigned char **mirror, int iters)
{
    static unsigned char plain[REGION], expect[REGION];
    /* Registered local memory lets the runtime use it in place; plain memory is staged. */
    unsigned char *registered = ARMCI_Malloc_local(REGION);
    for (int it = 0; it < iters; it++) {
        unsigned char *local = it % 4 < 2 ? registered : plain;
        int target = (me + it) % n;
        unsigned char *remote = (unsigned char *)blocks[target] + (size_t)me * REGION;
        size_t roff = (size_t)rnd(0, 97);
        size_t loff = (size_t)rnd(0, 31);
        struct shape s = random_shape(1, REGION - 128);
        fill_pattern(local, REGION, ((uint64_t)me << 32) + (uint64_t)it);

        armci_hdl_t h;
        ARMCI_INIT_HANDLE(&h);
        if (it % 2)
            ARMCI_PutS(local + loff, s.lstride, remote + roff, s.rstride, s.count, s.levels,
                       target);
        else
            ARMCI_NbPutS(local + loff, s.lstride, remote + roff, s.rstride, s.count, s.levels,
                         target, &h);
        ARMCI_Wait(&h);
        struct copy_ctx c = {mirror[target] + roff, local + loff, true};
        walk(&s, s.levels, 0, 0, copy_chunk, &c);
        ARMCI_Fence(target);
        verify_region(target, mirror[target], "PutS", it);

        /* Read a different random shape back and compare with the mirror. */
        struct shape g = random_shape(1, REGION - 128);
        memset(local, 0xAB, REGION);
        memset(expect, 0xAB, REGION);
        roff = (size_t)rnd(0, 97);
        if (it % 3)
            ARMCI_GetS(remote + roff, g.rstride, local + loff, g.lstride, g.count, g.levels,
                       target);
        else {
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbGetS(remote + roff, g.rstride, local + loff, g.lstride, g.count, g.levels,
                         target, &h);
            ARMCI_Wait(&h);
        }
        struct copy_ctx r = {mirror[target] + roff, expect + loff, false};
        walk(&g, g.levels, 0, 0, copy_chunk, &r);
        CHECK(memcmp(local, expect, REGION) == 0, "GetS (iteration %d) from %d differs", it,
              target);
    }
    ARMCI_Free_local(registered);
}

/* ---- accumulate ---- */

/*
 * Reference accumulate, element by element through memcpy (any alignment):
 * dst += scale * src. Integers wrap like the runtime's kernels.
 */
static void ref_acc(int type, const void *scale, unsigned char *dst, const unsigned char *src,
                    size_t len)
{
#define REF_LOOP(T, EXPR)                                            \
    for (size_t off = 0; off + sizeof(T) <= len; off += sizeof(T)) { \
        T d, x, s;                                                   \
        memcpy(&d, dst + off, sizeof(T));                            \
        memcpy(&x, src + off, sizeof(T));                            \
        memcpy(&s, scale, sizeof(T));                                \
        d = EXPR;                                                    \
        memcpy(dst + off, &d, sizeof(T));                            \
    }
    switch (type) {
    case ARMCI_ACC_INT:
        REF_LOOP(int, (int)((unsigned)d + (unsigned)s * (unsigned)x))
        break;
    case ARMCI_ACC_LNG:
        REF_LOOP(long, (long)((unsigned long)d + (unsigned long)s * (unsigned long)x))
        break;
    case ARMCI_ACC_FLT:
        REF_LOOP(float, d + s * x)
        break;
    case ARMCI_ACC_DBL:
        REF_LOOP(double, d + s * x)
        break;
    case ARMCI_ACC_CPL:
        REF_LOOP(float complex, d + s * x)
        break;
    default:
        REF_LOOP(double complex, d + s * x)
        break;
    }
#undef REF_LOOP
}

struct acc_ctx {
    int type;
    const void *scale;
    unsigned char *image;
    const unsigned char *src;
};

static void acc_chunk(size_t roff, size_t loff, size_t len, void *ctx)
{
    struct acc_ctx *a = ctx;
    ref_acc(a->type, a->scale, a->image + roff, a->src + loff, len);
}

static size_t elem_of(int type)
{
    static const size_t sizes[] = {4, 8, 4, 8, 8, 16};
    return sizes[type];
}

/* Small integers of the type's kind, so results are exact in any order. */
static void fill_values(unsigned char *buf, size_t bytes, int type)
{
    size_t e = elem_of(type);
    for (size_t off = 0; off + e <= bytes; off += e) {
        int v = rnd(-8, 8);
        switch (type) {
        case ARMCI_ACC_INT:
            memcpy(buf + off, &v, 4);
            break;
        case ARMCI_ACC_LNG: {
            long l = v;
            memcpy(buf + off, &l, 8);
            break;
        }
        case ARMCI_ACC_FLT: {
            float f = (float)v;
            memcpy(buf + off, &f, 4);
            break;
        }
        case ARMCI_ACC_DBL: {
            double d = v;
            memcpy(buf + off, &d, 8);
            break;
        }
        case ARMCI_ACC_CPL: {
            float c[2] = {(float)v, (float)rnd(-4, 4)};
            memcpy(buf + off, c, 8);
            break;
        }
        default: {
            double z[2] = {v, rnd(-4, 4)};
            memcpy(buf + off, z, 16);
            break;
        }
        }
    }
}

static void test_accs(unsigned char **mirror, int iters)
{
    static unsigned char local[REGION];
    static const int iscale = 3;
    static const long lscale = -2;
    static const float fscale = 0.5f;
    static const double dscale = 4.0;
    static const float cscale[2] = {1.0f, -2.0f};
    static const double zscale[2] = {-1.0, 3.0};
    const void *scales[] = {&iscale, &lscale, &fscale, &dscale, cscale, zscale};
    for (int it = 0; it < iters; it++) {
        int type = it % 6;
        size_t e = elem_of(type);
        int target = (me + 1 + it) % n;
        unsigned char *remote = (unsigned char *)blocks[target] + (size_t)me * REGION;
        size_t roff = e * (size_t)rnd(0, 9), loff = e * (size_t)rnd(0, 9);
        struct shape s = random_shape(e, REGION / 2);
        fill_values(local, REGION, type);
        if (it % 2) {
            ARMCI_AccS(type, (void *)scales[type], local + loff, s.lstride, remote + roff,
                       s.rstride, s.count, s.levels, target);
        } else {
            armci_hdl_t h;
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbAccS(type, (void *)scales[type], local + loff, s.lstride, remote + roff,
                         s.rstride, s.count, s.levels, target, &h);
            ARMCI_Wait(&h);
        }
        struct acc_ctx a = {type, scales[type], mirror[target] + roff, local + loff};
        walk(&s, s.levels, 0, 0, acc_chunk, &a);
        ARMCI_Fence(target);
        verify_region(target, mirror[target], "AccS", it);
    }
}

/* ---- vectors ---- */

/* AccV scales: 2 for the real types and single complex, i for double complex. */
static const int v_int = 2;
static const long v_long = 2;
static const float v_float = 2.0f;
static const double v_double = 2.0;
static const float v_cpl[2] = {2.0f, 0.0f};
static const double v_dcp[2] = {0.0, 1.0};
static const void *const vector_scales[] = {&v_int, &v_long, &v_float, &v_double, v_cpl, v_dcp};

static void test_vectors(unsigned char **mirror, int iters)
{
    static unsigned char local[REGION];
    enum { SEGS = 12 };
    for (int it = 0; it < iters; it++) {
        int target = (me + 2 + it) % n;
        unsigned char *remote = (unsigned char *)blocks[target] + (size_t)me * REGION;
        int type = it % 6;
        size_t e = elem_of(type);
        int bytes = (int)e * rnd(1, 40);
        /* Disjoint segments: segment k lives in slot k of both sides. */
        size_t slot = (size_t)REGION / SEGS;
        void *src[SEGS], *dst[SEGS];
        int nseg = rnd(1, SEGS);
        for (int k = 0; k < nseg; k++) {
            size_t lo = (size_t)k * slot + e * (size_t)rnd(0, 3);
            size_t ro = (size_t)((k * 7) % SEGS) * slot + e * (size_t)rnd(0, 3);
            src[k] = local + lo;
            dst[k] = remote + ro;
        }
        armci_giov_t iov = {src, dst, bytes, nseg};
        int kind = it % 3;
        if (kind == 0) {
            fill_pattern(local, REGION, (uint64_t)it * 31 + (uint64_t)me);
            ARMCI_PutV(&iov, 1, target);
        } else if (kind == 1) {
            fill_values(local, REGION, type);
            armci_hdl_t h;
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbAccV(type, (void *)vector_scales[type], &iov, 1, target, &h);
            ARMCI_Wait(&h);
        }
        if (kind == 2) {
            /* GetV: read segments back into fresh local slots and compare with the mirror. Every
             * other time two non-blocking ones at once, the second into a second buffer, both
             * in flight before either is waited for (a chain of reads completes as a whole). */
            static unsigned char again[REGION];
            void *src2[SEGS];
            for (int k = 0; k < nseg; k++)
                src2[k] = again + ((unsigned char *)src[k] - local);
            armci_giov_t back = {dst, src, bytes, nseg}, back2 = {dst, src2, bytes, nseg};
            bool both = (it / 3) % 2;
            memset(local, 0, REGION);
            memset(again, 0, REGION);
            if (both) {
                armci_hdl_t h1, h2;
                ARMCI_INIT_HANDLE(&h1);
                ARMCI_INIT_HANDLE(&h2);
                ARMCI_NbGetV(&back, 1, target, &h1);
                ARMCI_NbGetV(&back2, 1, target, &h2);
                ARMCI_Wait(&h2);
                ARMCI_Wait(&h1);
            } else {
                ARMCI_GetV(&back, 1, target);
            }
            for (int k = 0; k < nseg; k++) {
                const unsigned char *want = mirror[target] + ((char *)dst[k] - (char *)remote);
                CHECK(memcmp(src[k], want, (size_t)bytes) == 0,
                      "GetV (iteration %d) segment %d differs", it, k);
                CHECK(!both || memcmp(src2[k], want, (size_t)bytes) == 0,
                      "second NbGetV (iteration %d) segment %d differs", it, k);
            }
            continue;
        }
        for (int k = 0; k < nseg; k++) {
            size_t roff = (size_t)((char *)dst[k] - (char *)remote);
            size_t loff = (size_t)((char *)src[k] - (char *)local);
            if (kind == 0) {
                memcpy(mirror[target] + roff, local + loff, (size_t)bytes);
            } else {
                ref_acc(type, vector_scales[type], mirror[target] + roff, local + loff,
                        (size_t)bytes);
            }
        }
        ARMCI_Fence(target);
        verify_region(target, mirror[target], kind ? "AccV" : "PutV", it);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    n = armci_msg_nproc();
    int iters = argc > 1 ? atoi(argv[1]) : 40;
    rs = 0xD1B54A32D192ED03ULL ^ (uint64_t)(me + 1) * 0x9E3779B97F4A7C15ULL;

    blocks = malloc(sizeof(void *) * n);
    ARMCI_Malloc(blocks, (armci_size_t)REGION * n);
    memset(blocks[me], 0, (size_t)REGION * n);
    unsigned char **mirror = malloc(sizeof(unsigned char *) * n);
    for (int t = 0; t < n; t++)
        mirror[t] = calloc(REGION, 1);
    ARMCI_Barrier();

    test_puts_gets(mirror, iters);
    test_accs(mirror, iters);
    test_vectors(mirror, iters);

    ARMCI_Barrier();
    for (int t = 0; t < n; t++)
        free(mirror[t]);
    free(mirror);
    ARMCI_Free(blocks[me]);
    free(blocks);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
