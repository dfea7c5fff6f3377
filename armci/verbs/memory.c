#include "verbs/memory.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/topology.h"
#include "core/util.h"
#include "verbs/device.h"

static bool active;
static struct net_mr *user_regions; /* net_reg_user's, newest first */

bool net_active(void)
{
    return active;
}

void net_init(void)
{
    /* A single-node job talks through shared memory only: no verbs at all. */
    if (topo.num_nodes <= 1) {
        armci_log("single-node job: verbs not used");
        return;
    }
    verbs_device_open();
    active = true;
}

void net_fini(void)
{
    if (!active)
        return;
    verbs_device_close();
    active = false;
}

struct net_mr *net_reg(const char *call, void *addr, size_t len, bool remote)
{
    int access = IBV_ACCESS_LOCAL_WRITE;
    if (remote)
        access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    struct ibv_mr *mr = ibv_reg_mr(vdev.pd, addr, len, access);
    if (!mr)
        armci_die(call, "ibv_reg_mr of %zu bytes at %p failed: %s", len, addr, strerror(errno));
    struct net_mr *m = xmalloc(sizeof(*m));
    *m = (struct net_mr){.mr = mr, .addr = addr, .len = len, .lkey = mr->lkey, .rkey = mr->rkey};
    return m;
}

struct net_mr *net_reg_user(const char *call, void *addr, size_t len)
{
    struct net_mr *m = net_reg(call, addr, len, false);
    m->user = true;
    m->next = user_regions;
    user_regions = m;
    return m;
}

bool net_user_lkey(const void *addr, size_t len, uint32_t *lkey)
{
    uintptr_t a = (uintptr_t)addr;
    for (const struct net_mr *m = user_regions; m; m = m->next) {
        uintptr_t start = (uintptr_t)m->addr;
        if (a >= start && a + len <= start + m->len) {
            *lkey = m->lkey;
            return true;
        }
    }
    return false;
}

void net_dereg(struct net_mr *m)
{
    if (!m)
        return;
    if (m->user) {
        struct net_mr **link = &user_regions;
        while (*link != m)
            link = &(*link)->next;
        *link = m->next;
    }
    if (ibv_dereg_mr(m->mr))
        armci_warn("ibv_dereg_mr of %zu bytes at %p failed: %s", m->len, m->addr, strerror(errno));
    free(m);
}
