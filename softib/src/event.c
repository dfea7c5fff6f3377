/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wake-ups across processes and asynchronous events.
 *
 * Each completion channel and each context's async_fd is a unix datagram
 * socket bound to an autobound abstract name (nothing in the filesystem;
 * it vanishes with the socket). A process that completes work for another
 * records the event in the fabric first, then sends a one-byte datagram to
 * that name: the datagram only wakes the waiter, so one lost to a full
 * socket queue loses nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sib.h"

static int tx_fd = -1;
static pthread_once_t tx_once = PTHREAD_ONCE_INIT;

static void tx_open(void)
{
    tx_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

int sib_sock_open(struct sib_addr *addr)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    /* binding just the family asks the kernel for a unique abstract name */
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa_family_t)) ||
        getsockname(fd, (struct sockaddr *)&sa, &len)) {
        int err = errno;
        close(fd);
        return -err;
    }
    len -= (socklen_t)offsetof(struct sockaddr_un, sun_path);
    if (len == 0 || len > sizeof(addr->name)) {
        close(fd);
        return -EADDRNOTAVAIL;
    }
    addr->len = (uint8_t)len;
    memcpy(addr->name, sa.sun_path, len);
    return fd;
}

void sib_sock_wake(const struct sib_addr *addr)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char b = 1;

    if (!addr->len)
        return;
    pthread_once(&tx_once, tx_open);
    if (tx_fd < 0)
        return;
    memcpy(sa.sun_path, addr->name, addr->len);
    /* EAGAIN: the queue is full of wake-ups already; ECONNREFUSED: gone */
    (void)sendto(tx_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + addr->len));
}

int sib_sock_drain(int fd)
{
    char b[16];
    int n = 0;

    while (recv(fd, b, sizeof(b), MSG_DONTWAIT) >= 0)
        n++;
    return n;
}

bool sib_sock_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};

    return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

int sib_wait_fd(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, timeout_ms);

    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    return n;
}

bool sib_fd_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    return fl >= 0 && (fl & O_NONBLOCK);
}

/* ---- asynchronous events ---- */

void sib_async_post(uint32_t ctx_slot, uint32_t type, uint32_t kind, uint32_t slot, uint32_t gen)
{
    struct sib_fctx *fc = sib_fctx_at(&sib_fab, ctx_slot);
    struct sib_addr addr;

    if (!__atomic_load_n(&fc->in_use, __ATOMIC_ACQUIRE))
        return;
    sib_lock(&fc->ev_lock);
    if (fc->ev_tail - fc->ev_head < SIB_ASYNC_RING) {
        struct sib_async *e = &fc->ev[fc->ev_tail % SIB_ASYNC_RING];

        e->type = type;
        e->kind = kind;
        e->slot = slot;
        e->gen = gen;
        fc->ev_tail++;
    } else {
        fc->ev_lost++;
    }
    addr = fc->async_addr;
    sib_unlock(&fc->ev_lock);
    SIB_COUNT(fc, async_events, 1);
    sib_sock_wake(&addr);
}

static bool async_pop(struct sib_context *ctx, struct sib_async *e, bool *more)
{
    struct sib_fctx *fc = ctx->f;
    bool got = false;

    sib_lock(&fc->ev_lock);
    if (fc->ev_head != fc->ev_tail) {
        *e = fc->ev[fc->ev_head % SIB_ASYNC_RING];
        fc->ev_head++;
        got = true;
    }
    *more = fc->ev_head != fc->ev_tail;
    sib_unlock(&fc->ev_lock);
    return got;
}

/* Point the event at our local object; false if it is gone meanwhile. */
static bool async_resolve(struct sib_context *ctx, const struct sib_async *e,
                          struct ibv_async_event *out)
{
    memset(out, 0, sizeof(*out));
    out->event_type = (enum ibv_event_type)e->type;
    switch (e->kind) {
    case SIB_K_CQ: {
        struct sib_fcq *c = sib_fcq_at(&sib_fab, e->slot);

        if (!c->in_use || c->gen != e->gen || c->owner != ctx->slot)
            return false;
        out->element.cq = (struct ibv_cq *)(uintptr_t)c->owner_ptr;
        return true;
    }
    case SIB_K_QP: {
        struct sib_fqp *q = sib_fqp_at(&sib_fab, e->slot);

        if (q->qpn != e->gen || q->owner != ctx->slot)
            return false;
        out->element.qp = (struct ibv_qp *)(uintptr_t)q->owner_ptr;
        return true;
    }
    case SIB_K_SRQ: {
        struct sib_fsrq *s = sib_fsrq_at(&sib_fab, e->slot);

        if (!s->in_use || s->gen != e->gen || s->owner != ctx->slot)
            return false;
        out->element.srq = (struct ibv_srq *)(uintptr_t)s->owner_ptr;
        return true;
    }
    default:
        out->element.port_num = 1;
        return true;
    }
}

static bool async_empty(struct sib_context *ctx)
{
    return __atomic_load_n(&ctx->f->ev_head, __ATOMIC_ACQUIRE) ==
           __atomic_load_n(&ctx->f->ev_tail, __ATOMIC_ACQUIRE);
}

int sib_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
    struct sib_context *ctx = sib_ctx(context);
    struct sib_async e;
    bool more;

    if (!ctx || !event) {
        errno = EINVAL;
        return -1;
    }
    for (;;) {
        if (async_pop(ctx, &e, &more)) {
            char b[16];

            /* one datagram per event; keep the fd readable while more wait */
            (void)recv(context->async_fd, b, sizeof(b), MSG_DONTWAIT);
            if (more && !sib_sock_readable(context->async_fd))
                sib_sock_wake(&ctx->f->async_addr);
            if (async_resolve(ctx, &e, event))
                return 0;
            continue;
        }
        /* stale wake-ups only; an event posted meanwhile is seen below */
        sib_sock_drain(context->async_fd);
        if (!async_empty(ctx))
            continue;
        if (sib_fd_nonblocking(context->async_fd)) {
            errno = EAGAIN;
            return -1;
        }
        if (sib_wait_fd(context->async_fd, -1) < 0)
            return -1;
    }
}

void sib_ack_async_event(struct ibv_async_event *event)
{
    (void)event; /* objects are never waited on: nothing to release */
}
