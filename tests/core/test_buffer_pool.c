/*
 * The registered send-buffer pool (verbs/buffer_pool.c) alone, with the
 * registration replaced by a recorder: buffers are distinct, inside the
 * region, carry the registration's keys; get hands each out once and
 * returns NULL when all are taken; release and release_all give them back;
 * memory accounting and the registration are undone at destroy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "verbs/buffer_pool.h"
#include "verbs/memory.h"
#include "unit_test.h"

/* ---- what buffer_pool.c needs from the rest of the runtime ---- */

static int registered; /* live registrations */
static long accounted[MEM_KINDS];

struct net_mr *net_reg(const char *call, void *addr, size_t len, bool remote)
{
    (void)call;
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

/* ---- the test ---- */

enum { COUNT = 5, SIZE = 96 };

int main(void)
{
    struct buffer_pool p;
    buffer_pool_create(&p, "test", "test pool", COUNT, SIZE, true, MEM_BUF_SERVER);
    EXPECT(registered == 1 && p.free == COUNT, "a fresh pool: one registration, all free");
    EXPECT(accounted[MEM_BUF_SERVER] >= COUNT * SIZE, "the buffers are accounted for");

    struct pool_buffer *taken[COUNT];
    for (int i = 0; i < COUNT; i++) {
        taken[i] = buffer_pool_get(&p);
        EXPECT(taken[i], "a buffer while some are free");
        struct pool_buffer *b = taken[i];
        EXPECT(b->lkey == 0x1234 && b->rkey == 0x5678, "the registration's keys");
        EXPECT(buffer_pool_at(&p, b->index) == b, "at(index) is the buffer");
        EXPECT((char *)b->addr >= p.region &&
                   (char *)b->addr + SIZE <= p.region + (size_t)COUNT * SIZE &&
                   ((char *)b->addr - p.region) % SIZE == 0,
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
    buffer_pool_create(&quiet, "test", "not counted", 2, 8, false, MEM_KINDS);
    EXPECT(buffer_pool_get(&quiet)->rkey == 0, "a local pool has no rkey");
    buffer_pool_destroy(&quiet);
    for (int k = 0; k < MEM_KINDS; k++)
        EXPECT(accounted[k] == 0, "MEM_KINDS: not counted");
    printf("PASS\n");
    return 0;
}
