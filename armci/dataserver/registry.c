/*
 * The segments this data server has mapped and registered for remote
 * access, kept sorted by address: every request's range is checked here.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "verbs/memory.h"
#include "core/shm.h"
#include "core/util.h"
#include "dataserver/server_internal.h"

struct registered {
    uint64_t seg_id;
    uintptr_t base;
    size_t size;
    struct net_mr *mr;
};

static struct registered *regs;
static int nregs, capregs;

bool registry_contains(uint64_t addr, uint64_t len)
{
    int lo = 0, hi = nregs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const struct registered *r = &regs[mid];
        if (addr < r->base) {
            hi = mid - 1;
        } else if (addr >= r->base + r->size) {
            lo = mid + 1;
        } else {
            return len <= r->base + r->size - addr;
        }
    }
    return false;
}

void registry_map(uint64_t seg_id, const char *name, size_t size, uint64_t *base, uint32_t *rkey)
{
    void *addr = shm_map_existing(name, size);
    struct net_mr *mr = net_reg("ARMCI_Malloc (data server)", addr, size, true);
    if (nregs == capregs) {
        capregs = capregs ? 2 * capregs : 16;
        regs = xrealloc(regs, sizeof(*regs) * capregs);
    }
    int pos = nregs;
    while (pos > 0 && regs[pos - 1].base > (uintptr_t)addr) {
        regs[pos] = regs[pos - 1];
        pos--;
    }
    regs[pos] = (struct registered){seg_id, (uintptr_t)addr, size, mr};
    nregs++;
    *base = (uintptr_t)addr;
    *rkey = mr->rkey;
}

void registry_unmap(uint64_t seg_id)
{
    for (int i = 0; i < nregs; i++) {
        if (regs[i].seg_id != seg_id)
            continue;
        net_dereg(regs[i].mr);
        shm_unmap((void *)regs[i].base, regs[i].size);
        memmove(&regs[i], &regs[i + 1], sizeof(*regs) * (size_t)(nregs - i - 1));
        nregs--;
        return;
    }
    armci_warn("data server: asked to unmap unknown segment %llx", (unsigned long long)seg_id);
}

void registry_fini(void)
{
    while (nregs > 0)
        registry_unmap(regs[nregs - 1].seg_id);
    free(regs);
    regs = NULL;
    capregs = 0;
}
