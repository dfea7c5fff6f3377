#include "net.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "topology.h"
#include "util.h"
#include "verbs/device.h"

static bool active;

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

void net_dereg(struct net_mr *m)
{
    if (!m)
        return;
    if (ibv_dereg_mr(m->mr))
        armci_warn("ibv_dereg_mr of %zu bytes at %p failed: %s", m->len, m->addr, strerror(errno));
    free(m);
}
