/* The registration cache for user memory (reg_cache.h). */
#include "verbs/reg_cache.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"
#include "core/mutant.h"
#include "core/util.h"
#include "verbs/device.h"

struct reg_entry {
    struct ibv_mr *mr;
    uintptr_t start, end; /* page-rounded */
    uint64_t last_use;    /* for LRU */
    int users;            /* callers between reg_cache_keys and reg_cache_release */
};

/* A fixed array (callers hold pointers into it): a slot is free while its mr is NULL. */
static struct reg_entry *entries;
static int capacity;
static uint64_t clock_ticks;
static int (*works_in_flight)(void);

/* Devices whose memory regions follow the process's mapping (reg_cache.h: why only those). */
static bool follows_mapping(const char *provider)
{
#if ARMCI_MUTANT_IS(reg_cache_any_device)
    return true;
#endif
    return provider && !strcmp(provider, "softib");
}

void reg_cache_init(const char *provider, int (*in_flight)(void))
{
    capacity = follows_mapping(provider) ? cfg.reg_cache : 0;
    works_in_flight = in_flight;
    entries = capacity ? xcalloc((size_t)capacity, sizeof(*entries)) : NULL;
}

static void deregister(struct reg_entry *e)
{
    if (ibv_dereg_mr(e->mr))
        armci_warn("ibv_dereg_mr of cached %zu bytes at %p failed: %s", (size_t)(e->end - e->start),
                   (void *)e->start, strerror(errno));
    e->mr = NULL;
}

void reg_cache_fini(void)
{
    for (int i = 0; i < capacity; i++)
        if (entries[i].mr)
            deregister(&entries[i]);
    free(entries);
    entries = NULL;
    capacity = 0;
}

static struct reg_entry *lookup(uintptr_t a, uintptr_t end)
{
#if ARMCI_MUTANT_IS(reg_cache_start_only)
    end = a + 1; /* an entry where the range starts is taken, however far the range goes */
#endif
    for (int i = 0; i < capacity; i++)
        if (entries[i].mr && entries[i].start <= a && end <= entries[i].end)
            return &entries[i];
    return NULL;
}

/* A free slot: a new one, or the least recently used entry nobody can be using. */
static struct reg_entry *free_slot(void)
{
    for (int i = 0; i < capacity; i++)
        if (!entries[i].mr)
            return &entries[i];
#if !ARMCI_MUTANT_IS(reg_cache_evict_in_flight)
    if (works_in_flight() > 0)
        return NULL; /* a posted request may name any entry's keys */
#endif
    struct reg_entry *lru = NULL;
    for (int i = 0; i < capacity; i++)
        if (!entries[i].users && (!lru || entries[i].last_use < lru->last_use))
            lru = &entries[i];
    if (lru)
        deregister(lru);
    return lru;
}

struct reg_entry *reg_cache_keys(const void *addr, size_t len, uint32_t *lkey, uint32_t *rkey)
{
    if (!capacity || len == 0)
        return NULL;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)addr, end = a + len;
    if (end < a)
        return NULL;
    struct reg_entry *e = lookup(a, end);
    if (!e) {
        e = free_slot();
        if (!e)
            return NULL;
        uintptr_t start = a & ~(page - 1), stop = (end + page - 1) & ~(page - 1);
        /* Remote access too: a data server writes strided gets straight in and reads
         * pulled puts from here (as net_reg_user's). */
        struct ibv_mr *mr =
            ibv_reg_mr(vdev.pd, (void *)start, stop - start,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
        if (!mr)
            return NULL; /* e.g. unmapped pages in the range, or the MR table full: copy */
        *e = (struct reg_entry){.mr = mr, .start = start, .end = stop};
    }
    e->last_use = ++clock_ticks;
    e->users++;
    *lkey = e->mr->lkey;
    *rkey = e->mr->rkey;
    return e;
}

void reg_cache_release(struct reg_entry *e)
{
    if (e)
        e->users--;
}
