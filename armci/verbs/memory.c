#include "verbs/memory.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/grow.h"
#include "core/config.h"
#include "core/error.h"
#include "core/topology.h"
#include "core/util.h"
#include "verbs/device.h"
#include "verbs/reg_cache.h"

static bool active;
/* net_reg_user's registrations, sorted by address (they do not overlap): the put path looks
 * its source up here, by binary search. */
static struct net_mr **user_regions;
static int nuser, capuser;

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
    free(user_regions);
    user_regions = NULL;
    nuser = capuser = 0;
    if (!active)
        return;
    verbs_device_close();
    active = false;
}

/* Why a registration failed, in words a user can act on. rdma-core pins the pages it
 * registers, against the process's locked-memory limit (ulimit -l) unless it may lock any
 * amount: a low limit is the usual cause, and under Slurm the job takes the submitting
 * shell's limit unless slurm.conf has PropagateResourceLimitsExcept=MEMLOCK. Empty when
 * the limit is not the reason. */
static const char *reg_failure_hint(int err, char *buf, size_t size)
{
    struct rlimit rl;
    if ((err != ENOMEM && err != EPERM && err != EAGAIN) || getrlimit(RLIMIT_MEMLOCK, &rl) != 0 ||
        rl.rlim_cur == RLIM_INFINITY)
        return "";
    snprintf(buf, size,
             "; the locked-memory limit (ulimit -l) is %llu KiB: RDMA needs it unlimited (under "
             "Slurm: PropagateResourceLimitsExcept=MEMLOCK in slurm.conf and slurmd started "
             "with an unlimited one; docs/CLUSTER.md)",
             (unsigned long long)(rl.rlim_cur / 1024));
    return buf;
}

static void reg_failed(const char *call, void *addr, size_t len)
{
    int err = errno;
    char hint[256];
    armci_die(call, "ibv_reg_mr of %zu bytes at %p failed: %s%s", len, addr, strerror(err),
              reg_failure_hint(err, hint, sizeof(hint)));
}

struct net_mr *net_try_reg(void *addr, size_t len, bool remote)
{
    int access = IBV_ACCESS_LOCAL_WRITE;
    if (remote)
        access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    struct ibv_mr *mr = ibv_reg_mr(vdev.pd, addr, len, access);
    if (!mr)
        return NULL;
    struct net_mr *m = xmalloc(sizeof(*m));
    *m = (struct net_mr){.mr = mr, .addr = addr, .len = len, .lkey = mr->lkey, .rkey = mr->rkey};
    return m;
}

struct net_mr *net_reg(const char *call, void *addr, size_t len, bool remote)
{
    struct net_mr *m = net_try_reg(addr, len, remote);
    if (!m)
        reg_failed(call, addr, len);
    return m;
}

/* Index of the first region starting after a. */
static int user_upper_bound(uintptr_t a)
{
    int lo = 0, hi = nuser;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if ((uintptr_t)user_regions[mid]->addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct net_mr *net_reg_user(const char *call, void *addr, size_t len)
{
    /* Remote access too: a data server writes the data of strided gets straight in, and
     * reads that of strided puts from where it is. */
    struct ibv_mr *mr =
        ibv_reg_mr(vdev.pd, addr, len,
                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    if (!mr)
        reg_failed(call, addr, len);
    struct net_mr *m = xmalloc(sizeof(*m));
    *m = (struct net_mr){.mr = mr, .addr = addr, .len = len, .lkey = mr->lkey, .rkey = mr->rkey};
    m->user = true;
    GROW_FOR_ONE(user_regions, nuser, capuser, 16, xrealloc);
    int at = user_upper_bound((uintptr_t)addr);
    memmove(&user_regions[at + 1], &user_regions[at], sizeof(*user_regions) * (size_t)(nuser - at));
    user_regions[at] = m;
    nuser++;
    return m;
}

bool net_user_keys(const void *addr, size_t len, uint32_t *lkey, uint32_t *rkey)
{
    uintptr_t a = (uintptr_t)addr;
    int at = user_upper_bound(a) - 1;
    if (at < 0)
        return false;
    const struct net_mr *m = user_regions[at];
    uintptr_t start = (uintptr_t)m->addr;
    if (a + len < a || a + len > start + m->len)
        return false;
    *lkey = m->lkey;
    *rkey = m->rkey;
    return true;
}

void net_dereg(struct net_mr *m)
{
    if (!m)
        return;
    if (m->user) {
        int at = user_upper_bound((uintptr_t)m->addr) - 1;
        while (at >= 0 && user_regions[at] != m)
            at--;
        if (at >= 0) {
            memmove(&user_regions[at], &user_regions[at + 1],
                    sizeof(*user_regions) * (size_t)(nuser - at - 1));
            nuser--;
        }
    }
    if (ibv_dereg_mr(m->mr))
        armci_warn("ibv_dereg_mr of %zu bytes at %p failed: %s", m->len, m->addr, strerror(errno));
    free(m);
}

bool net_local_keys(const void *addr, size_t len, bool may_cache, uint32_t *lkey, uint32_t *rkey,
                    struct reg_entry **hold)
{
    *hold = NULL;
    if (net_user_keys(addr, len, lkey, rkey))
        return true;
    if (!may_cache)
        return false;
    *hold = reg_cache_keys(addr, len, lkey, rkey);
    return *hold != NULL;
}

void net_local_release(struct reg_entry *hold)
{
    reg_cache_release(hold);
}
