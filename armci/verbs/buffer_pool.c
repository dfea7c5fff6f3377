/* The registered send-buffer pool (buffer_pool.h). */
#include "verbs/buffer_pool.h"

#include <stdlib.h>

#include "core/util.h"
#include "verbs/memory.h"

static long footprint(const struct buffer_pool *p)
{
    return (long)((p->size + sizeof(struct pool_buffer)) * (size_t)p->count);
}

void buffer_pool_create(struct buffer_pool *p, const char *call, const char *what, int count,
                        size_t size, bool remote, enum mem_kind kind)
{
    *p = (struct buffer_pool){.what = what, .size = size, .count = count, .kind = kind};
    size_t total = size * (size_t)count;
    p->region = xmalloc_registrable(total);
    p->mr = net_reg(call, p->region, total, remote); /* dies naming ibv_reg_mr on failure */
    p->all = xcalloc((size_t)count, sizeof(*p->all));
    for (int i = 0; i < count; i++)
        p->all[i] = (struct pool_buffer){.addr = p->region + (size_t)i * size,
                                         .lkey = p->mr->lkey,
                                         .rkey = p->mr->rkey,
                                         .index = i};
    buffer_pool_release_all(p);
    if (kind != MEM_KINDS)
        memstat_add(kind, footprint(p));
}

void buffer_pool_destroy(struct buffer_pool *p)
{
    if (!p->region)
        return;
    if (p->kind != MEM_KINDS)
        memstat_add(p->kind, -footprint(p));
    net_dereg(p->mr);
    free(p->region);
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
