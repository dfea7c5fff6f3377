/* The registered send-buffer pool (buffer_pool.h). */
#include "verbs/buffer_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mutant.h"
#include "core/util.h"
#include "verbs/memory.h"

static long chunk_footprint(const struct buffer_pool *p, int n)
{
    return (long)(p->size * (size_t)n);
}

/* Registers n more buffers after the live ones and puts them on the free list. */
static bool add_chunk(struct buffer_pool *p, int n)
{
    struct pool_chunk k = {.first = p->count, .n = n};
    size_t bytes = p->size * (size_t)n;
    k.region = xmalloc_registrable(bytes);
    k.mr = net_try_reg(k.region, bytes, p->remote);
    if (!k.mr) {
        free(k.region);
        return false;
    }
    p->chunks = xrealloc(p->chunks, (size_t)(p->nchunks + 1) * sizeof(*p->chunks));
    p->chunks[p->nchunks++] = k;
    /* From the end, so that get hands out the chunk's first buffer first. */
    for (int i = n - 1; i >= 0; i--) {
        struct pool_buffer *b = &p->all[k.first + i];
        *b = (struct pool_buffer){.addr = k.region + (size_t)i * p->size,
                                  .lkey = k.mr->lkey,
                                  .rkey = k.mr->rkey,
                                  .index = k.first + i,
                                  .pool = p};
        buffer_pool_release(p, b);
    }
    p->count += n;
    if (p->kind != MEM_KINDS)
        memstat_add(p->kind, chunk_footprint(p, n));
    return true;
}

static void drop_last_chunk(struct buffer_pool *p)
{
    struct pool_chunk *k = &p->chunks[--p->nchunks];
    net_dereg(k->mr);
    free(k->region);
    p->count -= k->n;
    if (p->kind != MEM_KINDS)
        memstat_add(p->kind, -chunk_footprint(p, k->n));
}

void buffer_pool_create(struct buffer_pool *p, const char *call, const char *what, int initial,
                        int max, size_t size, bool remote, enum mem_kind kind)
{
    *p = (struct buffer_pool){.what = what,
                              .size = size,
                              .max = max > initial ? max : initial,
                              .remote = remote,
                              .kind = kind};
    p->records = p->max;
    p->all = xcalloc((size_t)p->records, sizeof(*p->all));
    if (kind != MEM_KINDS)
        memstat_add(kind, (long)(sizeof(*p->all) * (size_t)p->records));
    if (!add_chunk(p, initial))
        armci_die(call, "ibv_reg_mr of %zu bytes (%s) failed: %s", size * (size_t)initial, what,
                  strerror(errno));
}

bool buffer_pool_grow(struct buffer_pool *p)
{
    if (p->count >= p->max)
        return false;
    int n = MIN(p->count, p->max - p->count); /* doubles the pool */
    if (add_chunk(p, n))
        return true;
    armci_warn("%s: ibv_reg_mr of %zu bytes failed (%s): staying at %d buffers", p->what,
               p->size * (size_t)n, strerror(errno), p->count);
    p->max = p->count;
    return false;
}

#define TRIM_INTERVAL 1.0 /* seconds */

void buffer_pool_trim(struct buffer_pool *p, double now)
{
#if !ARMCI_MUTANT_IS(trim_with_buffer_out)
    if (p->free != p->count)
        return; /* a buffer is out: its chunk may be in flight */
#endif
    if (now - p->trimmed_at < TRIM_INTERVAL)
        return;
    p->trimmed_at = now;
    int before = p->count;
    while (p->nchunks > 1 && p->peak <= p->chunks[p->nchunks - 1].first)
        drop_last_chunk(p);
    p->peak = 0;
    if (p->count != before)
        buffer_pool_release_all(p); /* the free list held the dropped buffers too */
}

void buffer_pool_destroy(struct buffer_pool *p)
{
    if (!p->all)
        return;
    while (p->nchunks > 0)
        drop_last_chunk(p);
    if (p->kind != MEM_KINDS)
        memstat_add(p->kind, -(long)(sizeof(*p->all) * (size_t)p->records));
    free(p->chunks);
    free(p->all);
    *p = (struct buffer_pool){0};
}

void buffer_pool_release_all(struct buffer_pool *p)
{
    p->free_list = NULL;
    p->free = 0;
    /* From the end, so that get hands out buffer 0 first. */
    for (int i = p->count - 1; i >= 0; i--)
        buffer_pool_release(p, &p->all[i]);
}
