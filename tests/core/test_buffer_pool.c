/*
 * The registered send-buffer pool (verbs/buffer_pool.c) alone, with the
 * registration replaced by a recorder: buffers are distinct, inside their
 * chunk's region, carry the registration's keys; get hands each out once and
 * returns NULL when all are taken; release and release_all give them back;
 * memory accounting and the registration are undone at destroy. A growing
 * pool doubles when empty up to its max, stops growing where a registration
 * fails, and trim gives back only the chunks the peak since the last trim did
 * not reach, never below the initial count and never with a buffer out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "verbs/buffer_pool.h"
#include "verbs/memory.h"
#include "unit_test.h"

enum { COUNT = 5, SIZE = 96 };

/* ---- what buffer_pool.c needs from the rest of the runtime ---- */

static int registered;             /* live registrations */
static int refuse_after = 1 << 30; /* registrations that succeed from now on */
static int warnings;
static long accounted[MEM_KINDS];

struct net_mr *net_try_reg(void *addr, size_t len, bool remote)
{
    if (refuse_after-- <= 0)
        return NULL;
    struct net_mr *m = calloc(1, sizeof(*m));
    *m = (struct net_mr){.addr = addr, .len = len, .lkey = 0x1234, .rkey = remote ? 0x5678 : 0};
    registered++;
    return m;
}

void net_dereg(struct net_mr *mr)
{
    registered--;
    free(mr);
}

void memstat_add(enum mem_kind kind, long bytes)
{
    accounted[kind] += bytes;
}

void *xmalloc_registrable(size_t size)
{
    return malloc(size);
}

void *xcalloc(size_t n, size_t size)
{
    return calloc(n, size);
}

void *xrealloc(void *ptr, size_t size)
{
    return realloc(ptr, size);
}

void armci_warn(const char *fmt, ...)
{
    (void)fmt;
    warnings++;
}

void armci_die(const char *call, const char *fmt, ...)
{
    (void)call;
    (void)fmt;
    printf("FAIL: armci_die\n");
    exit(1);
}

/* The chunk of p whose region holds b. */
static const struct pool_chunk *chunk_of(const struct buffer_pool *p, const struct pool_buffer *b)
{
    for (int k = 0; k < p->nchunks; k++)
        if (b->index >= p->chunks[k].first && b->index < p->chunks[k].first + p->chunks[k].n)
            return &p->chunks[k];
    return NULL;
}

/* Takes every buffer p can give (growing it); returns how many. */
static int take_all(struct buffer_pool *p, struct pool_buffer **out, int room)
{
    int n = 0;
    for (struct pool_buffer *b; n < room && (b = buffer_pool_get(p));)
        out[n++] = b;
    return n;
}

static int growing(void)
{
    struct buffer_pool p;
    struct pool_buffer *out[16];
    buffer_pool_create(&p, "test", "growing", 2, 8, SIZE, true, MEM_BUF_BOUNCE);
    EXPECT(p.count == 2 && registered == 1, "a growing pool starts with its initial buffers");
    EXPECT(take_all(&p, out, 16) == 8 && p.count == 8 && registered == 3,
           "it doubles when empty (2, 4, 8) and stops at its max");
    EXPECT(buffer_pool_get(&p) == NULL, "then NULL");
    for (int i = 0; i < 8; i++) {
        const struct pool_chunk *k = chunk_of(&p, out[i]);
        EXPECT(k && (char *)out[i]->addr >= k->region &&
                   (char *)out[i]->addr + SIZE <= k->region + (size_t)k->n * SIZE,
               "each buffer lies in its chunk's region");
        for (int j = 0; j < i; j++)
            EXPECT(out[j] != out[i] && out[j]->addr != out[i]->addr, "handed out once");
    }
    EXPECT(p.peak == 8, "the peak is 8");
    buffer_pool_release(&p, out[0]);
    buffer_pool_trim(&p, 2.0);
    EXPECT(p.count == 8 && p.peak == 8 && registered == 3, "no trim while a buffer is out");
    for (int i = 1; i < 8; i++)
        buffer_pool_release(&p, out[i]);
    EXPECT(p.count == 8 && p.free == 8 && registered == 3, "released: all free, none given back");
    buffer_pool_trim(&p, 4.0);
    EXPECT(p.count == 8 && p.free == 8 && p.peak == 0, "a trim after a peak of 8 keeps all");
    EXPECT(take_all(&p, out, 3) == 3, "3 in use at once");
    for (int i = 0; i < 3; i++)
        buffer_pool_release(&p, out[i]);
    buffer_pool_trim(&p, 6.0);
    EXPECT(p.count == 4 && p.free == 4 && registered == 2 &&
               accounted[MEM_BUF_BOUNCE] == (long)(4 * SIZE + 8 * sizeof(struct pool_buffer)),
           "after a peak of 3 the chunk of 4 the peak did not reach is given back");
    buffer_pool_trim(&p, 6.5);
    EXPECT(p.count == 4, "not again within a second");
    buffer_pool_trim(&p, 8.0);
    EXPECT(p.count == 2 && registered == 1, "a peak of 0: back to the initial chunk");
    buffer_pool_trim(&p, 10.0);
    EXPECT(p.count == 2 && registered == 1, "never below it");
    int seen = 0;
    for (int i = 0, n = take_all(&p, out, 16); i < n; i++)
        seen |= 1 << out[i]->index;
    EXPECT(seen == 0xff && p.count == 8 && registered == 3, "grown again, every index once");
    for (int i = 0; i < 8; i++)
        buffer_pool_release(&p, out[i]);
    buffer_pool_destroy(&p);
    EXPECT(registered == 0 && accounted[MEM_BUF_BOUNCE] == 0, "destroy undoes all");

    buffer_pool_create(&p, "test", "refused", 2, 8, SIZE, false, MEM_BUF_BOUNCE);
    refuse_after = 0;
    EXPECT(take_all(&p, out, 16) == 2 && warnings == 1 && p.max == 2,
           "a chunk that cannot be registered: a warning, and the pool stays as it is");
    EXPECT(buffer_pool_get(&p) == NULL && warnings == 1, "not tried again");
    refuse_after = 1 << 30;
    for (int i = 0; i < 2; i++)
        buffer_pool_release(&p, out[i]);
    buffer_pool_destroy(&p);
    EXPECT(registered == 0 && accounted[MEM_BUF_BOUNCE] == 0, "destroy undoes all");
    return 0;
}

/* ---- the test ---- */

int main(void)
{
    struct buffer_pool p;
    buffer_pool_create(&p, "test", "test pool", COUNT, COUNT, SIZE, true, MEM_BUF_SERVER);
    EXPECT(registered == 1 && p.free == COUNT, "a fresh pool: one registration, all free");
    EXPECT(accounted[MEM_BUF_SERVER] >= COUNT * SIZE, "the buffers are accounted for");

    struct pool_buffer *taken[COUNT];
    for (int i = 0; i < COUNT; i++) {
        taken[i] = buffer_pool_get(&p);
        EXPECT(taken[i], "a buffer while some are free");
        struct pool_buffer *b = taken[i];
        EXPECT(b->lkey == 0x1234 && b->rkey == 0x5678, "the registration's keys");
        EXPECT(buffer_pool_at(&p, b->index) == b, "at(index) is the buffer");
        EXPECT(p.nchunks == 1 && (char *)b->addr >= p.chunks[0].region &&
                   (char *)b->addr + SIZE <= p.chunks[0].region + (size_t)COUNT * SIZE &&
                   ((char *)b->addr - p.chunks[0].region) % SIZE == 0,
               "a buffer is one slice of the region");
        for (int k = 0; k < i; k++)
            EXPECT(taken[k] != b && taken[k]->addr != b->addr, "each buffer handed out once");
        memset(b->addr, i, SIZE); /* the whole buffer is the holder's */
    }
    EXPECT(p.free == 0 && buffer_pool_get(&p) == NULL, "an empty pool gives NULL");

    taken[2]->owner = &p;
    buffer_pool_release(&p, taken[2]);
    EXPECT(p.free == 1 && taken[2]->owner == NULL, "release: free again, owner cleared");
    EXPECT(buffer_pool_get(&p) == taken[2], "the released buffer comes back");
    EXPECT(buffer_pool_get(&p) == NULL, "and only it");

    buffer_pool_release_all(&p);
    EXPECT(p.free == COUNT, "release_all frees every buffer");
    int seen = 0;
    for (struct pool_buffer *b; (b = buffer_pool_get(&p));)
        seen |= 1 << b->index;
    EXPECT(seen == (1 << COUNT) - 1, "after release_all each buffer is handed out once");

    buffer_pool_destroy(&p);
    EXPECT(registered == 0 && accounted[MEM_BUF_SERVER] == 0, "destroy undoes all");
    buffer_pool_destroy(&p); /* a zeroed pool: nothing to do */

    struct buffer_pool quiet;
    buffer_pool_create(&quiet, "test", "not counted", 2, 2, 8, false, MEM_KINDS);
    EXPECT(buffer_pool_get(&quiet)->rkey == 0, "a local pool has no rkey");
    buffer_pool_destroy(&quiet);
    for (int k = 0; k < MEM_KINDS; k++)
        EXPECT(accounted[k] == 0, "MEM_KINDS: not counted");
    if (growing())
        return 1;
    printf("PASS\n");
    return 0;
}
