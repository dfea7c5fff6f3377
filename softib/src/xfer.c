/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Moving bytes: between the poster's buffers and another process's with
 * process_vm_readv/writev (the kernel copies page to page; the target runs
 * nothing), or memcpy when both ends are in this process. Also the key
 * checks that turn SGEs into iovecs, and 8-byte atomics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sib.h"

/* ---- who we are ---- */

static pid_t self_pid;
static uint64_t self_start;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* Forget the peers' pidfds in a fork()ed child: they are its own copies,
 * closed before any of its code runs, so no fd of its own is hit. */
static void self_forget(void);

static void self_register(void)
{
    pthread_atfork(NULL, NULL, self_forget);
}

static bool is_self(const struct sib_peer *p)
{
    pid_t me = __atomic_load_n(&self_pid, __ATOMIC_ACQUIRE);

    if (!me) {
        pthread_once(&self_once, self_register);
        me = getpid();
        __atomic_store_n(&self_start, sib_pid_start_time(me), __ATOMIC_RELAXED);
        __atomic_store_n(&self_pid, me, __ATOMIC_RELEASE);
    }
    /* the start time too: a dead process that had our pid is not us */
    return p->pid == me && p->start_time == __atomic_load_n(&self_start, __ATOMIC_RELAXED);
}

/* ---- who we move bytes to ----
 *
 * process_vm_readv/writev take a pid, and a pid is reused once its process
 * is dead and reaped. So before every copy the peer is checked through a
 * pidfd, opened once per peer and verified then: a pidfd names the process
 * that had the pid when it was opened, for good. If that process is still
 * there after /proc/<pid>/stat was read, the start time read was its own;
 * it must be the one recorded when the peer's context opened. Before each
 * copy, the pidfd not being readable means the process has not exited, so
 * the pid still names it. The window left is between that poll() and the
 * kernel's own pid lookup inside the copy: the peer would have to exit, be
 * reaped and its pid be handed out again (after the allocator went round
 * all of pid_max) in between. docs/softib.md says more. */

struct peer_fd {
    int32_t pid;
    uint64_t start_time;
    int fd; /* pidfd + 1; 0: none */
};

/* At most this many pidfds are kept open: descriptors are the application's
 * too. Past it, cached ones are closed in turn (and reopened when needed). */
#define PEER_FDS_MAX 128

static struct peer_fd peer_fds[SIB_MAX_CTX];
static uint32_t peer_fds_open, peer_evict;
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

static void peer_close(struct peer_fd *e)
{
    if (!e->fd)
        return;
    close(e->fd - 1);
    e->fd = 0;
    peer_fds_open--;
}

void sib_peers_forget(void)
{
    pthread_mutex_lock(&peer_lock);
    for (uint32_t i = 0; i < SIB_MAX_CTX; i++)
        peer_close(&peer_fds[i]);
    pthread_mutex_unlock(&peer_lock);
}

static void self_forget(void)
{
    __atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
    pthread_mutex_init(&peer_lock, NULL); /* another thread may have held it */
    for (uint32_t i = 0; i < SIB_MAX_CTX; i++)
        peer_close(&peer_fds[i]);
}

/* A pidfd polls readable once its process has exited (zombie or reaped). */
static bool pidfd_exited(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    return poll(&pfd, 1, 0) != 0; /* an error is no proof of life either */
}

/* A verified pidfd for p, or -ESRCH (not the recorded process), or another
 * -errno when pidfds are unavailable (no pidfd_open, out of fds). */
static int peer_open(const struct sib_peer *p)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, p->pid, 0);

    if (fd < 0)
        return errno == ESRCH ? -ESRCH : -errno;
    if (sib_pid_start_time(p->pid) != p->start_time || pidfd_exited(fd)) {
        close(fd);
        return -ESRCH;
    }
    return fd;
#else
    (void)p;
    return -ENOSYS;
#endif
}

/* 0 when p still is the process its context recorded, ESRCH otherwise. */
static int peer_check(const struct sib_peer *p)
{
    struct peer_fd *e;
    int fd, rc = 0;

    if (p->slot >= SIB_MAX_CTX)
        return ESRCH;
    pthread_mutex_lock(&peer_lock);
    e = &peer_fds[p->slot];
    if (e->fd && (e->pid != p->pid || e->start_time != p->start_time))
        peer_close(e); /* the slot has a new owner */
    if (!e->fd) {
        while (peer_fds_open >= PEER_FDS_MAX)
            peer_close(&peer_fds[peer_evict++ % SIB_MAX_CTX]);
        fd = peer_open(p);
        if (fd >= 0) {
            e->pid = p->pid;
            e->start_time = p->start_time;
            e->fd = fd + 1;
            peer_fds_open++;
        } else if (fd == -ESRCH || !sib_pid_alive(p->pid, p->start_time)) {
            rc = ESRCH; /* without a pidfd: /proc each time, a wider window */
        }
    }
    if (e->fd && pidfd_exited(e->fd - 1))
        rc = ESRCH; /* kept: every later check answers at once */
    pthread_mutex_unlock(&peer_lock);
    return rc;
}

bool sib_peer_gone(const struct sib_peer *p)
{
    return !is_self(p) && peer_check(p) != 0;
}

/* A refused copy is most likely Yama (docs/softib.md): say so once. */
static void refused(const struct sib_peer *p, bool to_remote)
{
    static bool said;

    if (__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
        return;
    fprintf(stderr,
            "softib: process_vm_%s of pid %d refused (%s); is ptrace access between the job's "
            "processes restricted (Yama ptrace_scope, SOFTIB_PTRACER)?\n",
            to_remote ? "writev" : "readv", (int)p->pid, strerror(EPERM));
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

int sib_xfer_vec(const struct sib_peer *p, bool to_remote, struct iovec *l, int nl, struct iovec *r,
                 int nr, uint64_t *done)
{
    int rc;

    *done = 0;
    if (nl > SIB_BATCH_IOV || nr > SIB_BATCH_IOV)
        return EINVAL;
    if (is_self(p)) {
        iov_memcpy(to_remote, l, nl, r, nr);
        return 0;
    }
    iov_advance(&l, &nl, 0);
    iov_advance(&r, &nr, 0);
    while (nl && nr) {
        ssize_t n;

        /* right before the copy: the pid still names the peer */
        rc = peer_check(p);
        if (rc)
            return rc;
        /* may stop short (e.g. at a page it cannot reach): resume or fail */
        n = to_remote ? process_vm_writev(p->pid, l, (unsigned long)nl, r, (unsigned long)nr, 0)
                      : process_vm_readv(p->pid, l, (unsigned long)nl, r, (unsigned long)nr, 0);
        if (n < 0 && errno == EPERM)
            refused(p, to_remote);
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

int sib_xfer(const struct sib_peer *p, bool to_remote, const struct iovec *local, int nlocal,
             const struct iovec *remote, int nremote)
{
    struct iovec lbuf[SIB_MAX_SGE + 1], rbuf[SIB_MAX_SGE + 1];
    uint64_t done;

    if (nlocal > SIB_MAX_SGE + 1 || nremote > SIB_MAX_SGE + 1)
        return EINVAL;
    memcpy(lbuf, local, (size_t)nlocal * sizeof(*lbuf));
    memcpy(rbuf, remote, (size_t)nremote * sizeof(*rbuf));
    return sib_xfer_vec(p, to_remote, lbuf, nlocal, rbuf, nremote, &done);
}

int sib_atomic(const struct sib_peer *p, uint64_t va, uint32_t opcode, uint64_t cmp_add,
               uint64_t swap, uint64_t *orig)
{
    struct iovec mine = {.iov_base = orig, .iov_len = 8};
    struct iovec theirs = {.iov_base = (void *)(uintptr_t)va, .iov_len = 8};
    uint64_t val;
    int rc;

    /* one lock for the whole fabric: HCA atomics are atomic with respect to
     * each other, whichever process's memory (or shared mapping) they hit */
    sib_lock(&sib_fab.hdr->atomic_lock);
    rc = sib_xfer(p, false, &mine, 1, &theirs, 1);
    if (!rc) {
        if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
            val = *orig + cmp_add;
        else
            val = *orig == cmp_add ? swap : *orig;
        mine.iov_base = &val;
        rc = sib_xfer(p, true, &mine, 1, &theirs, 1);
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
