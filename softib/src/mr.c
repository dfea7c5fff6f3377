/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions. Registration only records (owner pid, address range,
 * IOVA, access) in the fabric's MR table: nothing is pinned, since data
 * moves with process_vm_readv/writev, which fault pages in as needed.
 * Keys are <slot:16><generation:8>, so a stale key never matches a reused
 * slot. Readers use the slot's sequence counter instead of a lock; writers
 * hold the MR lock, which is where a reader goes when the counter stays odd
 * (a writer that died mid-update never makes it even again).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sib.h"

#define MR_ACCESS_KNOWN                                                          \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
     IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |     \
     IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | IBV_ACCESS_OPTIONAL_RANGE)
#define MR_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* Is every page of [addr, addr+len) mapped? (reg_mr fails with EFAULT otherwise) */
static bool range_mapped(uintptr_t addr, size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t p = addr & ~(uintptr_t)(pg - 1);
    uintptr_t end = addr + len;
    unsigned char vec[4096];

    while (p < end) {
        size_t chunk = (size_t)(end - p);

        if (chunk > sizeof(vec) * (size_t)pg)
            chunk = sizeof(vec) * (size_t)pg;
        if (mincore((void *)p, chunk, vec))
            return false;
        p += chunk;
    }
    return true;
}

static int mr_slot_alloc(uint32_t *idx)
{
    static uint32_t hint;

    for (uint32_t n = 0; n < SIB_MAX_MR; n++) {
        uint32_t i = (hint + n) % SIB_MAX_MR;

        if (!sib_fmr_at(&sib_fab, i)->lkey) {
            hint = i + 1;
            *idx = i;
            sib_slot_used(&sib_fab.hdr->mr_used, i);
            return 0;
        }
    }
    return ENOMEM;
}

struct ibv_mr *sib_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
                          unsigned int access)
{
    struct sib_pd *pd = sib_pd(ibpd);
    struct sib_context *ctx;
    struct sib_fmr *m;
    struct sib_mr *mr;
    uint32_t idx;
    int rc;

    if (!pd || length == 0 || (access & ~(unsigned)MR_ACCESS_KNOWN))
        return sib_null(EINVAL);
    /* remote write/atomic imply local write (IB spec o10-2.2.x, rdma-core) */
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
        !(access & IBV_ACCESS_LOCAL_WRITE))
        return sib_null(EINVAL);
    if ((uintptr_t)addr + length < (uintptr_t)addr || !range_mapped((uintptr_t)addr, length))
        return sib_null(EFAULT);
    ctx = sib_ctx(ibpd->context);
    mr = calloc(1, sizeof(*mr));
    if (!mr)
        return sib_null(ENOMEM);
    sib_cost(sib_knobs.cost_reg_mr_us);

    sib_lock(&sib_fab.hdr->lock);
    rc = mr_slot_alloc(&idx);
    if (rc) {
        sib_unlock(&sib_fab.hdr->lock);
        free(mr);
        return sib_null(rc);
    }
    m = sib_fmr_at(&sib_fab, idx);
    sib_mr_lock(&sib_fab);
    sib_fmr_write_begin(m);
    m->gen = m->gen % 255 + 1;
    m->owner = ctx->slot;
    m->pid = ctx->pid;
    m->start_time = ctx->f->start_time;
    m->pd = pd->id;
    m->addr = (uintptr_t)addr;
    m->iova = iova;
    m->length = length;
    m->access = access & (IBV_ACCESS_LOCAL_WRITE | MR_REMOTE);
    m->lkey = (idx << 8) | m->gen;
    m->rkey = (access & MR_REMOTE) ? m->lkey : 0; /* as rxe: no remote access, no rkey */
    sib_fmr_write_end(m);
    sib_mr_unlock(&sib_fab);
    sib_unlock(&sib_fab.hdr->lock);

    mr->slot = idx;
    mr->ibmr.context = ibpd->context;
    mr->ibmr.pd = ibpd;
    mr->ibmr.addr = addr;
    mr->ibmr.length = length;
    mr->ibmr.handle = idx;
    mr->ibmr.lkey = m->lkey;
    mr->ibmr.rkey = m->rkey;
    sib_obj_init(&mr->o, SIB_K_MR, mr);
    __atomic_fetch_add(&pd->users, 1, __ATOMIC_RELAXED);
    SIB_COUNT(ctx->f, mr_registered, 1);
    return &mr->ibmr;
}

int sib_dereg_mr(struct ibv_mr *ibmr)
{
    struct sib_mr *mr = ibmr ? sib_container_of(ibmr, struct sib_mr, ibmr) : NULL;
    struct sib_context *ctx;
    struct sib_fmr *m;

    if (!mr || !sib_obj_ok(&mr->o, SIB_K_MR))
        return sib_err(EINVAL);
    ctx = sib_ctx(ibmr->context);
    m = sib_fmr_at(&sib_fab, mr->slot);
    sib_lock(&sib_fab.hdr->lock);
    sib_mr_lock(&sib_fab);
    if (m->lkey == ibmr->lkey)
        sib_fmr_clear(m);
    sib_mr_unlock(&sib_fab);
    sib_unlock(&sib_fab.hdr->lock);
    __atomic_fetch_sub(&sib_pd(ibmr->pd)->users, 1, __ATOMIC_RELAXED);
    SIB_COUNT(ctx->f, mr_deregistered, 1);
    sib_obj_bury(ctx, &mr->o);
    return 0;
}

/* A seqlock read retries only while a writer is inside a few stores. */
#define MR_READ_TRIES 128

static bool mr_read(const struct sib_fmr *m, struct sib_fmr *out)
{
    uint32_t s1, s2;

    s1 = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);
    if (s1 & 1)
        return false;
    memcpy(out, m, sizeof(*out));
#if defined(__SANITIZE_THREAD__)
    s2 = __atomic_load_n(&m->seq, __ATOMIC_SEQ_CST); /* TSan does not model fences */
#else
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    s2 = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
#endif
    return s1 == s2;
}

bool sib_mr_lookup(uint32_t key, bool remote, struct sib_fmr *out)
{
    uint32_t idx = key >> 8;
    struct sib_fmr *m;
    int tries;

    if (!key || idx >= SIB_MAX_MR)
        return false;
    m = sib_fmr_at(&sib_fab, idx);
    for (tries = 0; tries < MR_READ_TRIES && !mr_read(m, out); tries++)
        if (tries >= MR_READ_TRIES / 2)
            sched_yield();
    if (tries == MR_READ_TRIES) {
        /* The writer is slow, or died with the counter odd. Writers hold
         * the MR lock: wait for it there instead of spinning; a dead
         * writer's slot is cleared by whoever takes the lock next. */
        sib_mr_lock(&sib_fab);
        if (__atomic_load_n(&m->seq, __ATOMIC_ACQUIRE) & 1)
            sib_fmr_clear(m); /* odd with the lock free: nobody is writing it */
        memcpy(out, m, sizeof(*out));
        sib_mr_unlock(&sib_fab);
    }
    return (remote ? out->rkey : out->lkey) == key;
}

bool sib_mr_range(const struct sib_fmr *mr, uint64_t iova, uint64_t len, uint32_t need,
                  uint64_t *va)
{
    if ((mr->access & need) != need)
        return false;
    if (iova < mr->iova || len > mr->length || iova - mr->iova > mr->length - len)
        return false;
    *va = mr->addr + (iova - mr->iova);
    return true;
}
