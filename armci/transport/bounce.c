/* The client's pool of registered bounce buffers (bounce.h). */
#include "transport/bounce.h"

#include <stdlib.h>

#include "core/config.h"
#include "core/memstat.h"
#include "core/util.h"
#include "verbs/memory.h"

static struct {
    void *region;
    struct net_mr *mr;
    struct bounce *all;
    struct bounce *free_list;
} pool;

void bounce_pool_init(void)
{
    size_t total = cfg.bounce_size * (size_t)cfg.bounce_count;
    pool.region = xmalloc_registrable(total);
    /* Remote write too: the data server writes packed get data straight into them. */
    pool.mr = net_reg("ARMCI_Init", pool.region, total, true);
    pool.all = xcalloc((size_t)cfg.bounce_count, sizeof(struct bounce));
    memstat_add(MEM_BUF_BOUNCE, (long)(total + sizeof(struct bounce) * (size_t)cfg.bounce_count));
    for (int i = 0; i < cfg.bounce_count; i++) {
        struct bounce *b = &pool.all[i];
        b->buf = (char *)pool.region + (size_t)i * cfg.bounce_size;
        b->lkey = pool.mr->lkey;
        b->rkey = pool.mr->rkey;
        b->next = pool.free_list;
        pool.free_list = b;
    }
}

void bounce_pool_fini(void)
{
    if (!pool.mr)
        return;
    net_dereg(pool.mr);
    free(pool.region);
    free(pool.all);
    memstat_add(MEM_BUF_BOUNCE,
                -(long)((cfg.bounce_size + sizeof(struct bounce)) * (size_t)cfg.bounce_count));
    pool = (typeof(pool)){0};
}

struct bounce *bounce_try_get(void)
{
    struct bounce *b = pool.free_list;
    if (b)
        pool.free_list = b->next;
    return b;
}

void bounce_free(struct bounce *b)
{
    b->next = pool.free_list;
    pool.free_list = b;
}
