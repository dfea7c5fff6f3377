/*
 * Gets into memory ARMCI never allocated (GA's local arrays, malloc'd or
 * mapped by the user), checked byte for byte, with the bytes around every
 * patch checked untouched:
 *   - GA's shapes: 2-D patches of doubles out of a remote block with a
 *     leading dimension of 2048 (a column per chunk), 2 KiB to 2 MiB, the
 *     local side packed (one run: the data server may write it in place) or
 *     with a leading dimension of its own (RDMA reads land in place); a 3-D
 *     box; a contiguous 2 MiB get; blocking, and several non-blocking into
 *     different buffers at once (more than ARMCI_REG_CACHE entries in the
 *     meson case that sets 1);
 *   - the registration cache's classic bug: a buffer unmapped and mapped
 *     again at the same address (MAP_FIXED_NOREPLACE), larger, with other
 *     contents, and gets into it, inside and past the old range, and free
 *     + malloc: the data must land in the memory mapped now (a registration
 *     still naming the old pages would leave the new ones unchanged), and a
 *     range past the old registration must not be taken for it;
 *   - on softib with the cache on: a large get into a new buffer registers
 *     it (it moves zero-copy) and the next one into it reuses that
 *     registration, so that a path which quietly stopped using the cache
 *     fails here too.
 * Each rank gets from the rank half the job away (another virtual node with
 * ARMCI_NODE_SIZE <= np/2).
 * Usage: test_user_gets [rounds]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <softib/softib.h>
#include <string.h>
#include <sys/mman.h>

#include "testutil.h"

#define LD       2048 /* doubles per column of the remote block */
#define COLS     512  /* columns of the remote block: 8 MiB */
#define NB       4    /* non-blocking gets in flight at once */
#define PAD      4096 /* bytes checked untouched before and after a patch */
#define SENTINEL 0xa5

static int me, np, partner;
static void **blocks;
static const size_t block_bytes = (size_t)LD * COLS * sizeof(double);

typedef int (*get_counters_fn)(struct softib_counters *);
static get_counters_fn get_counters; /* NULL: not softib (rdma-core), or the cache is off */

/* The byte at offset i of rank r's remote block. */
static unsigned char remote_byte(int r, size_t i)
{
    return pattern_byte(1000 + (uint64_t)r, i);
}

/* A patch: count[0] bytes x count[1] x count[2], out of the remote block at `at` bytes. */
struct shape {
    const char *name;
    int levels;
    int count[3];
    int lstride[2]; /* local strides: count[0] (and count[0]*count[1]) when packed */
    size_t at;
};

static int rstride[2] = {LD * (int)sizeof(double), LD *(int)sizeof(double) * 32};

static size_t local_extent(const struct shape *s)
{
    size_t e = (size_t)s->count[0];
    for (int l = 0; l < s->levels; l++)
        e += (size_t)s->lstride[l] * (size_t)(s->count[l + 1] - 1);
    return e;
}

/* Offsets of a patch's rows, local and remote, in order: fn(local, remote, len). */
static void each_row(const struct shape *s, void (*fn)(size_t, size_t, size_t, void *), void *ctx)
{
    int n1 = s->levels >= 1 ? s->count[1] : 1, n2 = s->levels >= 2 ? s->count[2] : 1;
    for (int k = 0; k < n2; k++)
        for (int j = 0; j < n1; j++) {
            size_t l = (size_t)j * (s->levels >= 1 ? (size_t)s->lstride[0] : 0) +
                       (size_t)k * (s->levels >= 2 ? (size_t)s->lstride[1] : 0);
            size_t r = s->at + (size_t)j * (size_t)rstride[0] + (size_t)k * (size_t)rstride[1];
            fn(l, r, (size_t)s->count[0], ctx);
        }
}

struct check_ctx {
    const unsigned char *buf; /* the patch's first byte, PAD bytes into the mapping */
    unsigned char *seen;      /* bytes of the extent a row covered */
    const char *what;
};

static void check_row(size_t l, size_t r, size_t len, void *p)
{
    struct check_ctx *c = p;
    for (size_t i = 0; i < len; i++) {
        unsigned char want = remote_byte(partner, r + i);
        CHECK(c->buf[l + i] == want,
              "%s: byte %zu of the row at local %zu (remote %zu): %#x, want %#x", c->what, i, l, r,
              c->buf[l + i], want);
        c->seen[l + i] = 1;
    }
}

/* The patch landed at buf, and nothing else in [buf - PAD, buf + extent + PAD) changed. */
static void check_patch(const struct shape *s, const unsigned char *buf, const char *what)
{
    size_t extent = local_extent(s);
    struct check_ctx c = {buf, calloc(extent, 1), what};
    CHECK(c.seen, "calloc");
    each_row(s, check_row, &c);
    for (size_t i = 0; i < extent; i++)
        CHECK(c.seen[i] || buf[i] == SENTINEL, "%s: gap byte %zu of the local box changed to %#x",
              what, i, buf[i]);
    for (size_t i = 1; i <= PAD; i++)
        CHECK(buf[-(long)i] == SENTINEL && buf[extent + i - 1] == SENTINEL,
              "%s: a byte within %zu of the local box changed", what, i);
    free(c.seen);
}

/* Room for s plus PAD either side, from malloc, filled with SENTINEL; the patch goes at +PAD. */
static unsigned char *malloc_room(const struct shape *s)
{
    size_t bytes = local_extent(s) + 2 * PAD;
    unsigned char *p = malloc(bytes);
    CHECK(p, "malloc of %zu bytes", bytes);
    memset(p, SENTINEL, bytes);
    return p;
}

static void get(const struct shape *s, unsigned char *dst, armci_hdl_t *h)
{
    char *src = (char *)blocks[partner] + s->at;
    int rs[2] = {rstride[0], rstride[1]}, ls[2] = {s->lstride[0], s->lstride[1]};
    int count[3] = {s->count[0], s->count[1], s->count[2]};
    int rc = h ? ARMCI_NbGetS(src, rs, dst, ls, count, s->levels, partner, h)
               : ARMCI_GetS(src, rs, dst, ls, count, s->levels, partner);
    CHECK(rc == 0, "%s: get returned %d", s->name, rc);
}

#define D ((int)sizeof(double))
static const struct shape shapes[] = {
    {"16x16", 1, {16 * D, 16}, {16 * D}, 8 * D},
    {"128x64", 1, {128 * D, 64}, {128 * D}, (size_t)3 * LD *D + 40 * D},
    {"512x512", 1, {512 * D, 512}, {512 * D}, 0},
    {"1024x256", 1, {1024 * D, 256}, {1024 * D}, 1000 * D + (size_t)100 * LD *D},
    {"512x512 local ld 520", 1, {512 * D, 512}, {520 * D}, 16 * D},
    {"full columns 2048x128", 1, {LD * D, 128}, {LD * D}, (size_t)200 * LD *D},
    {"3-D 64x32x16", 2, {64 * D, 32, 16}, {72 * D, 72 * D * 33}, 24 * D},
    {"contiguous 2 MiB", 0, {2 << 20}, {0}, (size_t)64 * LD *D},
};
#define NSHAPES (int)(sizeof(shapes) / sizeof(shapes[0]))

/* Gets too small for a registration of their own: they open the connections. */
static void blocking_gets_small(void)
{
    for (int k = 0; k < 2; k++) {
        unsigned char *room = malloc_room(&shapes[k]);
        get(&shapes[k], room + PAD, NULL);
        check_patch(&shapes[k], room + PAD, shapes[k].name);
        free(room);
    }
}

static void blocking_gets(void)
{
    for (int k = 0; k < NSHAPES; k++) {
        unsigned char *room = malloc_room(&shapes[k]);
        get(&shapes[k], room + PAD, NULL);
        check_patch(&shapes[k], room + PAD, shapes[k].name);
        /* Again into the same buffer (a cached registration, where the cache is on). */
        memset(room, SENTINEL, local_extent(&shapes[k]) + 2 * PAD);
        get(&shapes[k], room + PAD, NULL);
        check_patch(&shapes[k], room + PAD, shapes[k].name);
        free(room);
    }
}

/* NB gets of the large shapes into NB buffers at once, then the waits. */
static void nonblocking_gets(void)
{
    unsigned char *room[NB];
    armci_hdl_t h[NB];
    for (int k = 0; k < NB; k++) {
        room[k] = malloc_room(&shapes[2 + k]);
        ARMCI_INIT_HANDLE(&h[k]);
        get(&shapes[2 + k], room[k] + PAD, &h[k]);
    }
    for (int k = NB - 1; k >= 0; k--)
        ARMCI_Wait(&h[k]);
    for (int k = 0; k < NB; k++) {
        check_patch(&shapes[2 + k], room[k] + PAD, shapes[2 + k].name);
        free(room[k]);
    }
}

static unsigned char *map(void *hint, size_t bytes)
{
    void *p = mmap(hint, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    if (p == MAP_FAILED && hint)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu bytes failed", bytes);
    memset(p, SENTINEL, bytes);
    return p;
}

static uint64_t mrs_registered(void)
{
    struct softib_counters c = {.size = sizeof(c)};
    CHECK(get_counters(&c) == 0, "softib_get_counters failed");
    return c.mr_registered;
}

/*
 * The first large get into memory nobody registered goes zero-copy: it
 * registers the buffer once, and the next get into it reuses that. (Only
 * the first: later buffers may lie in ranges the cache still holds, from
 * memory freed since, and need no registration of their own.) The counter
 * is the whole process's: the runtime's own pools grow by use (on this
 * side, and in the data server this process may host), so a get of the
 * same shape into another mapping sizes them first, and the ranks take
 * their turns (the caller), so that no data server serves anyone else
 * meanwhile.
 */
static void first_large_get(void)
{
    const struct shape *s = &shapes[2]; /* 512x512, packed: 2 MiB */
    size_t bytes = local_extent(s) + 2 * PAD;
    unsigned char *warm = map(NULL, bytes);
    get(s, warm + PAD, NULL);
    check_patch(s, warm + PAD, "get into a mapping that sizes the pools");
    unsigned char *a = map(NULL, bytes);
    uint64_t before = mrs_registered();
    get(s, a + PAD, NULL);
    check_patch(s, a + PAD, "first get into a new mapping");
    uint64_t once = mrs_registered();
    CHECK(once > before, "a 2 MiB get into a new mapping was not registered (copied?)");
    memset(a, SENTINEL, bytes);
    get(s, a + PAD, NULL);
    check_patch(s, a + PAD, "get into the same mapping again");
    CHECK(mrs_registered() == once, "the second get into one mapping registered it again");
    CHECK(munmap(a, bytes) == 0, "munmap");
    CHECK(munmap(warm, bytes) == 0, "munmap");
}

/*
 * Gets into a mapping, unmapped and mapped again at the same address (larger,
 * with other contents), and gets into the new one: at its start (inside the
 * old mapping's range) and 1 MiB in (past its end). Returns whether the
 * address came back.
 */
static int gets_after_remap(void)
{
    const struct shape *s = &shapes[2];
    size_t first = local_extent(s) + 2 * PAD, second = first + (2 << 20);
    /* Mapped at the larger size and cut back, so that the room above stays free for it. */
    unsigned char *a = map(NULL, second);
    CHECK(munmap(a + first, second - first) == 0, "munmap");
    get(s, a + PAD, NULL);
    check_patch(s, a + PAD, "get into a new mapping");
    CHECK(munmap(a, first) == 0, "munmap");
    unsigned char *b = map(a, second);
    get(s, b + PAD, NULL);
    check_patch(s, b + PAD, "get after munmap and mmap at the same address");
    memset(b, SENTINEL, second);
    get(s, b + PAD + (1 << 20), NULL);
    check_patch(s, b + PAD + (1 << 20), "get past the old mapping's end");
    CHECK(munmap(b, second) == 0, "munmap");
    return a == b;
}

/* The same with malloc: freed, malloc'd again (often at the same address), got into. */
static int gets_after_free(void)
{
    const struct shape *s = &shapes[3];
    unsigned char *a = malloc_room(s);
    get(s, a + PAD, NULL);
    check_patch(s, a + PAD, "get into malloc'd memory");
    free(a);
    unsigned char *b = malloc_room(s);
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    get(s, b + PAD, &h);
    ARMCI_Wait(&h);
    check_patch(s, b + PAD, "get into memory freed and malloc'd again");
    free(b);
    return a == b;
}

/* softib's counters, when the runtime uses softib with the registration cache as it comes
 * (ARMCI_REG_CACHE unset: a smaller cache may hold other entries it cannot drop yet). */
static void find_counters(void)
{
    void *softib = dlopen("libsoftib.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!softib || getenv("ARMCI_REG_CACHE"))
        return;
    get_counters = (get_counters_fn)dlsym(softib, "softib_get_counters");
    CHECK(get_counters, "softib_get_counters not found");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    np = armci_msg_nproc();
    CHECK(np % 2 == 0, "needs an even number of processes");
    partner = (me + np / 2) % np;
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    blocks = malloc(sizeof(void *) * np);
    ARMCI_Malloc(blocks, (armci_size_t)block_bytes);
    for (size_t i = 0; i < block_bytes; i++)
        ((unsigned char *)blocks[me])[i] = remote_byte(me, i);
    find_counters();
    ARMCI_Barrier();
    if (get_counters) {
        /* Connections first: from here on, no registrations but those of our gets. */
        blocking_gets_small();
        for (int turn = 0; turn < np; turn++) {
            ARMCI_Barrier();
            if (turn == me)
                first_large_get();
        }
        ARMCI_Barrier();
    }
    int remapped = 0, malloced = 0;
    for (int r = 0; r < rounds; r++) {
        blocking_gets();
        nonblocking_gets();
        remapped += gets_after_remap();
        malloced += gets_after_free();
    }
    /* The point is memory reused at the same address: say how often it was. */
    printf("rank %d: mapped again at the same address %d of %d, malloc'd again %d of %d%s\n", me,
           remapped, rounds, malloced, rounds, get_counters ? "" : " (registrations not counted)");
    CHECK(remapped > 0, "no mapping came back at its old address");
    ARMCI_Barrier();
    ARMCI_Free(blocks[me]);
    free(blocks);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
