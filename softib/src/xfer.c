/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Moving bytes: between the poster's buffers and another process's with
 * process_vm_readv/writev (the kernel copies page to page; the target runs
 * nothing), or memcpy when both ends are in this process. Also the key
 * checks that turn SGEs into iovecs, and 8-byte atomics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sib.h"

static pid_t self_pid;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_forget(void)
{
    __atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
}

static void self_register(void)
{
    pthread_atfork(NULL, NULL, self_forget);
}

bool sib_same_pid(int32_t pid)
{
    pid_t me = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);

    if (!me) {
        pthread_once(&self_once, self_register);
        me = getpid();
        __atomic_store_n(&self_pid, me, __ATOMIC_RELAXED);
    }
    return pid == me;
}

/* Advance an iovec cursor by n bytes. */
static void iov_advance(struct iovec **iov, int *cnt, size_t n)
{
    while (n && *cnt) {
        if (n < (*iov)->iov_len) {
            (*iov)->iov_base = (char *)(*iov)->iov_base + n;
            (*iov)->iov_len -= n;
            return;
        }
        n -= (*iov)->iov_len;
        (*iov)++;
        (*cnt)--;
    }
    while (*cnt && (*iov)->iov_len == 0) {
        (*iov)++;
        (*cnt)--;
    }
}

static void iov_memcpy(bool to_remote, struct iovec *l, int nl, struct iovec *r, int nr)
{
    iov_advance(&l, &nl, 0);
    iov_advance(&r, &nr, 0);
    while (nl && nr) {
        size_t n = l->iov_len < r->iov_len ? l->iov_len : r->iov_len;

        if (to_remote)
            memcpy(r->iov_base, l->iov_base, n);
        else
            memcpy(l->iov_base, r->iov_base, n);
        iov_advance(&l, &nl, n);
        iov_advance(&r, &nr, n);
    }
}

int sib_xfer_vec(int32_t pid, bool to_remote, struct iovec *l, int nl, struct iovec *r, int nr,
                 uint64_t *done)
{
    *done = 0;
    if (nl > SIB_BATCH_IOV || nr > SIB_BATCH_IOV)
        return EINVAL;
    if (sib_same_pid(pid)) {
        iov_memcpy(to_remote, l, nl, r, nr);
        return 0;
    }
    iov_advance(&l, &nl, 0);
    iov_advance(&r, &nr, 0);
    while (nl && nr) {
        /* may stop short (e.g. at a page it cannot reach): resume or fail */
        ssize_t n = to_remote
                        ? process_vm_writev(pid, l, (unsigned long)nl, r, (unsigned long)nr, 0)
                        : process_vm_readv(pid, l, (unsigned long)nl, r, (unsigned long)nr, 0);

        if (n < 0)
            return errno == ESRCH ? ESRCH : EFAULT;
        if (n == 0)
            return EFAULT;
        *done += (uint64_t)n;
        iov_advance(&l, &nl, (size_t)n);
        iov_advance(&r, &nr, (size_t)n);
    }
    return 0;
}

int sib_xfer(int32_t pid, bool to_remote, const struct iovec *local, int nlocal,
             const struct iovec *remote, int nremote)
{
    struct iovec lbuf[SIB_MAX_SGE + 1], rbuf[SIB_MAX_SGE + 1];
    uint64_t done;

    if (nlocal > SIB_MAX_SGE + 1 || nremote > SIB_MAX_SGE + 1)
        return EINVAL;
    memcpy(lbuf, local, (size_t)nlocal * sizeof(*lbuf));
    memcpy(rbuf, remote, (size_t)nremote * sizeof(*rbuf));
    return sib_xfer_vec(pid, to_remote, lbuf, nlocal, rbuf, nremote, &done);
}

int sib_atomic(int32_t pid, uint64_t va, uint32_t opcode, uint64_t cmp_add, uint64_t swap,
               uint64_t *orig)
{
    struct iovec mine = {.iov_base = orig, .iov_len = 8};
    struct iovec theirs = {.iov_base = (void *)(uintptr_t)va, .iov_len = 8};
    uint64_t val;
    int rc;

    /* one lock for the whole fabric: HCA atomics are atomic with respect to
     * each other, whichever process's memory (or shared mapping) they hit */
    sib_lock(&sib_fab.hdr->atomic_lock);
    rc = sib_xfer(pid, false, &mine, 1, &theirs, 1);
    if (!rc) {
        if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
            val = *orig + cmp_add;
        else
            val = *orig == cmp_add ? swap : *orig;
        mine.iov_base = &val;
        rc = sib_xfer(pid, true, &mine, 1, &theirs, 1);
    }
    sib_unlock(&sib_fab.hdr->atomic_lock);
    return rc;
}

enum ibv_wc_status sib_local_iov(struct sib_qp *qp, const struct ibv_sge *sge, uint32_t n,
                                 uint32_t need, struct iovec *iov, int *niov, uint64_t *total)
{
    struct sib_fmr mr;
    uint64_t va;
    int k = 0;

    *total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!sge[i].length)
            continue;
        if (!sib_mr_lookup(sge[i].lkey, false, &mr) || mr.pd != qp->pd->id ||
            !sib_mr_range(&mr, sge[i].addr, sge[i].length, need, &va))
            return IBV_WC_LOC_PROT_ERR;
        iov[k].iov_base = (void *)(uintptr_t)va;
        iov[k].iov_len = sge[i].length;
        *total += sge[i].length;
        k++;
    }
    *niov = k;
    return IBV_WC_SUCCESS;
}

int sib_iov_clip(struct iovec *iov, int n, uint64_t len)
{
    int k = 0;

    while (k < n && len) {
        if (iov[k].iov_len > len)
            iov[k].iov_len = len;
        len -= iov[k].iov_len;
        k++;
    }
    return k;
}

enum ibv_wc_status sib_recv_iov(uint64_t pd, const struct sib_rwqe *r, uint64_t len,
                                struct iovec *iov, int *niov)
{
    struct sib_fmr mr;
    uint64_t room = 0, va;
    int k = 0;

    for (uint32_t i = 0; i < r->num_sge; i++) {
        const struct ibv_sge *s = &r->sge[i];

        if (!s->length)
            continue;
        if (!sib_mr_lookup(s->lkey, false, &mr) || mr.pd != pd ||
            !sib_mr_range(&mr, s->addr, s->length, IBV_ACCESS_LOCAL_WRITE, &va))
            return IBV_WC_LOC_PROT_ERR;
        iov[k].iov_base = (void *)(uintptr_t)va;
        iov[k].iov_len = s->length;
        room += s->length;
        k++;
    }
    if (room < len)
        return IBV_WC_LOC_LEN_ERR;
    *niov = sib_iov_clip(iov, k, len);
    return IBV_WC_SUCCESS;
}
