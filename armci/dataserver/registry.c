/*
 * The segments this data server has mapped and registered for remote
 * access, kept sorted by address: every request's range is checked here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "common/grow.h"
#include "core/runtime.h"
#include "core/shm.h"
#include "core/ticket_lock.h"
#include "core/util.h"
#include "dataserver/registry.h"
#include "verbs/memory.h"

struct registered {
    uint64_t seg_id;
    uintptr_t base;
    size_t size;
    enum registry_kind kind;
    int owner; /* node-local index of the process that mapped it */
    struct net_mr *mr;
};

static struct registered *regs;
static int nregs, capregs;
static registry_lock_block_gone_fn lock_block_gone;

void registry_init(registry_lock_block_gone_fn gone)
{
    lock_block_gone = gone;
}

static const struct registered *find(uint64_t addr)
{
    int lo = 0, hi = nregs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const struct registered *r = &regs[mid];
        if (addr < r->base)
            hi = mid - 1;
        else if (addr >= r->base + r->size)
            lo = mid + 1;
        else
            return r;
    }
    return NULL;
}

bool registry_contains(uint64_t addr, uint64_t len)
{
    const struct registered *r = find(addr);
    return r && len <= r->base + r->size - addr;
}

bool registry_lkey(uint64_t addr, uint64_t len, uint32_t *lkey)
{
    const struct registered *r = find(addr);
    if (!r || len > r->base + r->size - addr)
        return false;
    *lkey = r->mr->lkey;
    return true;
}

bool registry_is_lock(uint64_t addr)
{
    const struct registered *r = find(addr);
    /* Lock blocks are arrays of whole locks from cache-line-aligned block starts. */
    return r && r->kind == REGISTRY_LOCKS && (addr - r->base) % sizeof(struct ticket_lock) == 0 &&
           sizeof(struct ticket_lock) <= r->base + r->size - addr;
}

/* This job's objects only: "/armci-<job>-..." (shm.c names them). */
static bool job_object(const char *name)
{
    char prefix[64];
    int n = snprintf(prefix, sizeof(prefix), "/armci-%s-", rt.job_id);
    return strncmp(name, prefix, (size_t)n) == 0 && !strchr(name + 1, '/');
}

int registry_map(uint64_t seg_id, const char *name, size_t size, enum registry_kind kind, int local,
                 uint64_t wanted, uint64_t *base, uint32_t *rkey)
{
    if (size == 0 || !job_object(name))
        return EINVAL;
    for (int i = 0; i < nregs; i++)
        if (regs[i].seg_id == seg_id)
            return EEXIST;
    int err = 0;
    /* Wherever it lands, the range is registered below and checked on every request. */
    void *addr = shm_try_map_existing(name, size, (void *)(uintptr_t)wanted, &err);
    if (!addr)
        return err;
    struct net_mr *mr = net_reg("ARMCI_Malloc (data server)", addr, size, true);
    GROW_FOR_ONE(regs, nregs, capregs, 16, xrealloc);
    int pos = nregs;
    while (pos > 0 && regs[pos - 1].base > (uintptr_t)addr) {
        regs[pos] = regs[pos - 1];
        pos--;
    }
    regs[pos] = (struct registered){seg_id, (uintptr_t)addr, size, kind, local, mr};
    nregs++;
    *base = (uintptr_t)addr;
    *rkey = mr->rkey;
    return 0;
}

static void remove_at(int i)
{
    if (regs[i].kind == REGISTRY_LOCKS && lock_block_gone)
        lock_block_gone(regs[i].base, regs[i].size);
    net_dereg(regs[i].mr);
    shm_unmap((void *)regs[i].base, regs[i].size);
    memmove(&regs[i], &regs[i + 1], sizeof(*regs) * (size_t)(nregs - i - 1));
    nregs--;
}

int registry_unmap(uint64_t seg_id, int local)
{
    for (int i = 0; i < nregs; i++) {
        if (regs[i].seg_id != seg_id)
            continue;
        if (regs[i].owner != local)
            return EPERM;
        remove_at(i);
        return 0;
    }
    return ENOENT;
}

void registry_fini(void)
{
    while (nregs > 0)
        remove_at(nregs - 1);
    free(regs);
    regs = NULL;
    capregs = 0;
    lock_block_gone = NULL;
}
