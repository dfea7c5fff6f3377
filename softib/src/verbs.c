/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs entry points: every ibv_* call of libibverbs' API that softib
 * answers (but ibv_*_str, strings.c), and the context's operations table
 * (post_send, post_recv, poll_cq, ...), in the order of the objects. Most
 * hand over to the object's file; the ones that join an object to the
 * engine are written out here: closing a device and destroying or modifying
 * a QP drop or settle its send queue (req.c), and polling a CQ or waiting on
 * a channel progresses the context's send queues first. Nothing below calls
 * this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>

#include "sib.h"

#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* ---- device and context (device.c) ---- */

SIB_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
    return sib_get_device_list(num_devices);
}

SIB_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
    sib_free_device_list(list);
}

SIB_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
    return sib_get_device_name(device);
}

SIB_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
    return sib_get_device_guid(device);
}

static int poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);

static void ctx_setup_ops(struct sib_context *ctx)
{
    struct ibv_context_ops *ops = &ctx->vctx.context.ops;

    ops->poll_cq = poll_cq;
    ops->req_notify_cq = sib_req_notify_cq;
    ops->post_send = sib_post_send;
    ops->post_recv = sib_post_recv;
    ops->post_srq_recv = sib_post_srq_recv;
    ctx->vctx.query_port = sib_query_port;
}

SIB_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    struct ibv_context *context = sib_open_device(device);

    if (context)
        ctx_setup_ops(sib_ctx(context));
    return context;
}

SIB_EXPORT int ibv_close_device(struct ibv_context *context)
{
    struct sib_context *ctx = sib_ctx(context);

    if (!ctx)
        return sib_err(EINVAL);
    /* QPs own local queues; other objects die with the fabric slot. */
    while (ctx->qps)
        sib_qp_destroy_local(ctx->qps, sib_sq_drop);
    sib_ctx_close(ctx);
    return 0;
}

SIB_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
    return sib_query_device(context, attr);
}

/* The exported symbol old binaries call, with the pre-"flags" layout. */
SIB_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                              struct _compat_ibv_port_attr *port_attr)
{
    return sib_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
                          offsetof(struct ibv_port_attr, flags));
}

SIB_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
                             union ibv_gid *gid)
{
    return sib_query_gid(context, port_num, index, gid);
}

SIB_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
                              __be16 *pkey)
{
    return sib_query_pkey(context, port_num, index, pkey);
}

SIB_EXPORT int ibv_fork_init(void)
{
    return 0; /* nothing is pinned: fork() is always safe */
}

SIB_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
    return IBV_FORK_UNNEEDED;
}

SIB_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
    struct sib_context *ctx = sib_ctx(context);

    if (ctx)
        sib_port_watch(ctx);
    return sib_get_async_event(context, event);
}

SIB_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
    sib_ack_async_event(event);
}

/* ---- protection domains (pd.c) ---- */

SIB_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
    return sib_alloc_pd(context);
}

SIB_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
    return sib_dealloc_pd(ibpd);
}

/* ---- memory regions (mr.c) ---- */

SIB_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    return sib_reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

SIB_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
                                          uint64_t iova, int access)
{
    return sib_reg_mr(pd, addr, length, iova, (unsigned)access);
}

SIB_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
                                           uint64_t iova, unsigned int access)
{
    return sib_reg_mr(pd, addr, length, iova, access);
}

SIB_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
    return sib_dereg_mr(ibmr);
}

/* ---- address handles (ah.c) ---- */

SIB_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
    return sib_create_ah(ibpd, attr);
}

SIB_EXPORT int ibv_destroy_ah(struct ibv_ah *ibah)
{
    return sib_destroy_ah(ibah);
}

SIB_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
                                   struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
    return sib_init_ah_from_wc(context, port_num, wc, grh, ah_attr);
}

SIB_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
                                                struct ibv_grh *grh, uint8_t port_num)
{
    return sib_create_ah_from_wc(pd, wc, grh, port_num);
}

/* ---- completion channels and CQs (cq.c) ---- */

SIB_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
    return sib_create_comp_channel(context);
}

SIB_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    return sib_destroy_comp_channel(channel);
}

static int wait_timeout_ms(struct sib_context *ctx, uint64_t deadline)
{
    uint64_t now;

    if (!__atomic_load_n(&ctx->pending, __ATOMIC_ACQUIRE))
        return -1;
    /* work is waiting on a timer (RNR, retransmission, wire) or another
     * thread: sleep until it is due, but never block indefinitely */
    now = sib_now_ns();
    if (!deadline || deadline <= now)
        return 1;
    return deadline - now > 10000000ull ? 10 : (int)((deadline - now + 999999) / 1000000);
}

SIB_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
                                void **cq_context)
{
    struct sib_channel *c = sib_chan(channel);
    struct sib_context *ctx;

    if (!c || !cq || !cq_context || !(ctx = sib_ctx(channel->context))) {
        errno = EINVAL;
        return -1;
    }
    for (;;) {
        uint64_t deadline;
        bool more;
        struct sib_cq *got;

        sib_port_watch(ctx);
        deadline = sib_progress(ctx);
        got = sib_chan_take(c, &more);

        if (got) {
            char b[16];

            (void)recv(channel->fd, b, sizeof(b), MSG_DONTWAIT);
            if (more && !sib_sock_readable(channel->fd))
                sib_sock_wake(&c->addr);
            *cq = &got->ibcq;
            *cq_context = got->ibcq.cq_context;
            SIB_COUNT(ctx->f, cq_events, 1);
            return 0;
        }
        if (sib_sock_drain(channel->fd))
            continue; /* a wake-up raced with our scan: look again */
        if (sib_fd_nonblocking(channel->fd)) {
            errno = EAGAIN;
            return -1;
        }
        if (sib_wait_fd(channel->fd, wait_timeout_ms(ctx, deadline)) < 0)
            return -1;
    }
}

SIB_EXPORT void ibv_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
    sib_ack_cq_events(ibcq, nevents);
}

SIB_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                        struct ibv_comp_channel *channel, int comp_vector)
{
    return sib_create_cq(context, cqe, cq_context, channel, comp_vector);
}

SIB_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
    return sib_destroy_cq(ibcq);
}

SIB_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
    return sib_resize_cq(cq, cqe);
}

static int poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
    struct sib_cq *cq = sib_cq(ibcq);
    struct sib_context *ctx;

    if (!cq || n < 0 || (n > 0 && !wc)) {
        errno = EINVAL;
        return -1;
    }
    ctx = sib_ctx(ibcq->context);
    if (ctx) {
        sib_port_watch(ctx);
        if (__atomic_load_n(&ctx->pending, __ATOMIC_ACQUIRE))
            sib_progress(ctx);
    }
    return sib_cq_poll(cq, n, wc);
}

/* ---- queue pairs (qp.c) ---- */

SIB_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *a)
{
    return sib_create_qp(ibpd, a);
}

SIB_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
    return sib_destroy_qp(ibqp, sib_sq_drop);
}

SIB_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
                            struct ibv_qp_init_attr *init)
{
    return sib_query_qp(ibqp, attr, mask, init);
}

SIB_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
    return sib_modify_qp(ibqp, attr, attr_mask, sib_sq_settle);
}

/* ---- shared receive queues (srq.c) ---- */

SIB_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *init)
{
    return sib_create_srq(ibpd, init);
}

SIB_EXPORT int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
    return sib_modify_srq(ibsrq, attr, mask);
}

SIB_EXPORT int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
    return sib_query_srq(ibsrq, attr);
}

SIB_EXPORT int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
    return sib_destroy_srq(ibsrq);
}
