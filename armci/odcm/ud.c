#include "odcm/ud.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fault.h"
#include "core/mutant.h"
#include "verbs/memory.h"
#include "core/runtime.h"
#include "core/util.h"
#include "core/wr_id.h"

#define UD_BUF_SIZE 128 /* GRH + message, rounded up */

_Static_assert(UD_GRH_BYTES + sizeof(struct cm_msg) <= UD_BUF_SIZE, "UD buffer too small");

/*
 * At most one completion per posted work request: UD_SEND_BUFS sends
 * (one per send buffer) and UD_RECV_BUFS receives (each reposted only after its
 * completion was polled). A reset of the QP (restart) posts all of them
 * again while completions of the ones before may still wait in the CQ; they
 * are polled before any completion that could cause the next reset (a CQ is
 * FIFO), so at most two generations are there at once.
 */
int ud_send_cq_entries(void)
{
    return 2 * UD_SEND_BUFS;
}

int ud_recv_cq_entries(void)
{
    return 2 * UD_RECV_BUFS;
}

/* 0 or the errno of ibv_modify_qp. */
static int modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    int rc = ibv_modify_qp(qp, attr, mask);
    return rc > 0 ? rc : rc ? errno : 0;
}

/* RESET -> INIT -> RTR -> RTS (a UD QP needs no peer); 0 or the first error, naming the step. */
static int bring_up(struct ud_endpoint *u, const char **step)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = vdev.port, .qkey = u->qkey};
    *step = "RESET->INIT";
    int rc = modify(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    if (rc)
        return rc;
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR};
    *step = "INIT->RTR";
    if ((rc = modify(u->qp, &a, IBV_QP_STATE)))
        return rc;
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = 0};
    *step = "RTR->RTS";
    return modify(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int post_datagram(struct ud_endpoint *u, struct ibv_ah *ah, uint32_t qpn, const void *data,
                         size_t len, int peer_key);

/* The reply handle of send buffer i, once its send completed or was flushed by a reset. */
static void drop_reply_ah(struct ud_endpoint *u, int i)
{
    if (!u->on_message || !u->reply_ah[i])
        return;
    if (ibv_destroy_ah(u->reply_ah[i]))
        armci_warn("ibv_destroy_ah (UD channel of %s, a reply's) failed: %s", u->who,
                   strerror(errno));
    u->reply_ah[i] = NULL;
}

/*
 * A reset QP sends itself a datagram: until it comes back, ud_check does
 * not believe the QP hears. rdma_rxe was seen to leave a reset UD QP
 * reporting RTS while its receive side stayed in error (a datagram failing
 * during the reset), deaf for good: no completion, no state tells.
 */
static void send_probe(struct ud_endpoint *u)
{
    if (!u->self_ah) {
        struct verbs_addr me = verbs_my_addr(u->qp->qp_num, 0);
        struct ibv_ah_attr attr;
        verbs_fill_ah_attr(&attr, &me);
        u->self_ah = ibv_create_ah(vdev.pd, &attr);
        if (!u->self_ah)
            armci_die(NULL, "ibv_create_ah (UD channel of %s, to itself) failed: %s", u->who,
                      strerror(errno));
    }
    if (u->send.free == 0)
        return; /* the next check tries again */
    struct ud_probe p = {.magic = UD_PROBE_MAGIC, .generation = u->send_generation};
    post_datagram(u, u->self_ah, u->qp->qp_num, &p, sizeof(p), -1);
    u->probe_due = false;
    u->probe_sent_at = now_seconds();
}

/*
 * A failed work request may leave the QP in the error state (rxe does so
 * for a datagram longer than the receive buffer, which anybody can send);
 * then it would receive nothing more. So after any failure the QP goes
 * through RESET back to RTS, keeping its number (the directory stays
 * right), and every buffer is posted again; completions of what was posted
 * before are ignored (generations). Datagrams lost meanwhile are
 * retransmitted by the protocol.
 */
static void restart(struct ud_endpoint *u, const char *why)
{
    long n = __atomic_add_fetch(&u->restarts, 1, __ATOMIC_RELAXED); /* read by tests */
    if (n <= 8)
        armci_warn("UD channel (%s): %s: QP reset%s", u->who, why,
                   n == 8 ? " (no more such warnings)" : "");
    /* A datagram still on its way may put the QP in error again before it is up: retry. */
    const char *step = "->RESET";
    int rc = 0;
    for (int attempt = 0; attempt < 16; attempt++) {
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
        step = "->RESET";
        if ((rc = modify(u->qp, &a, IBV_QP_STATE)) || !(rc = bring_up(u, &step)))
            break;
    }
    if (rc)
        armci_die(NULL, "ibv_modify_qp %s (UD channel of %s, restarting it) failed: %s", step,
                  u->who, strerror(rc));
    /* Posted only now: the queue receives nothing before RTS, and an error before would
     * leave completions of one more generation in the CQ. */
    buffer_pool_release_all(&u->send);
    for (int i = 0; u->on_message && i < UD_SEND_BUFS; i++)
        drop_reply_ah(u, i);
    u->send_generation = (u->send_generation + 1) & 0x1fffffffu;
    recv_pool_reset(&u->recv);
    /* Sent by the next check, not now: rxe was seen to complete a send posted right after a
     * reset with a zeroed work-request id (its completer still flushing the queue). */
    u->probe_due = true;
    u->probe_sent_at = 0;
}

static void restart_after(struct ud_endpoint *u, const struct ibv_wc *wc, bool send)
{
    char why[96];
    snprintf(why, sizeof(why), "%s failed (%s)", send ? "a send" : "a receive",
             ibv_wc_status_str(wc->status));
    restart(u, why);
}

/* A receive failed or was flushed (the QP is in the error state): never reposted alone. */
static bool on_receive_failed(void *ctx, const struct ibv_wc *wc)
{
    restart_after(ctx, wc, false);
    return false;
}

void ud_check(struct ud_endpoint *u)
{
#if ARMCI_MUTANT_IS(ud_check_noop)
    return;
#endif
    double now = now_seconds();
    double last = u->checked_at;
    if (now - last < 0.5)
        return;
    u->checked_at = now;
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    int rc = ibv_query_qp(u->qp, &attr, IBV_QP_STATE, &init);
    if (rc) {
        armci_warn("ibv_query_qp (UD channel of %s) failed: %s", u->who, strerror(rc));
        return;
    }
    /* Both rules below compare with the last check, however long ago: a process back from
     * computing polls its CQs before its timers run (and so before this check), so what
     * arrived while it was away is counted. The probe: out at the last check already. */
#if !ARMCI_MUTANT_IS(ud_probe_ignored)
    if (u->probe_sent_at > 0 && u->probe_sent_at <= last) {
        restart(u, "since its last reset it has not heard even itself (a probe it sent itself)");
        return;
    }
#endif
    if (attr.qp_state == IBV_QPS_ERR || attr.qp_state == IBV_QPS_SQE) {
        restart(u, attr.qp_state == IBV_QPS_ERR
                       ? "the QP is in the error state, and no completion said so"
                       : "the QP's send queue is in the error state, and no completion said so");
        return;
    }
    /* A send out at the last check, and none completed since: a datagram leaves in
     * microseconds, so the send queue is hung although the QP reports RTS. */
    bool out = u->send.free < u->send.count;
    bool stalled = out && u->sends_done == u->sends_done_at_check;
#if ARMCI_MUTANT_IS(ud_send_stall_ignored)
    stalled = false; /* the bug: a hung send queue is believed */
#endif
    u->sends_done_at_check = out ? u->sends_done : -1;
    if (stalled) {
        restart(u, "no send has completed since the last check (half a second ago at least)");
        return;
    }
    if (u->probe_due)
        send_probe(u);
}

/* A qkey of our own per job: stray datagrams of other jobs are dropped by the device. */
uint32_t ud_job_qkey(void)
{
    uint32_t h = 2166136261u;
    for (const char *p = rt.job_id; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return h & 0x7fffffff; /* the top bit marks privileged qkeys */
}

static void on_send_done(void *ctx, const struct ibv_wc *wc)
{
    struct ud_endpoint *u = ctx;
    u->sends_done++;
    uint64_t id = wr_id_index(wc->wr_id);
    if ((uint32_t)(id >> 32) != u->send_generation)
        return; /* posted before the QP was reset: its buffer is free already */
    buffer_pool_release(&u->send, buffer_pool_at(&u->send, (int)(uint32_t)id));
    drop_reply_ah(u, (int)(uint32_t)id);
    if (wc->status != IBV_WC_SUCCESS)
        restart_after(u, wc, true); /* the protocol retransmits what was lost */
}

static void on_datagram(void *ctx, const struct ibv_wc *wc)
{
    struct ud_endpoint *u = ctx;
    ud_deliver(u, wc, recv_pool_buffer(&u->recv, wc));
}

/*
 * A receive buffer holds the longest datagram the port carries, so no datagram
 * anybody sends fails a receive: rdma_rxe moves a QP whose receive failed to
 * the error state, and its reset back to RTS races with datagrams still
 * arriving (seen: a QP reporting RTS that never received again, posts that
 * failed with ENOMEM). Longer than the endpoint's datagrams, it is refused
 * as any malformed one.
 */
static size_t recv_buf_size(const struct ud_endpoint *u)
{
    size_t port = UD_GRH_BYTES + ((size_t)128 << vdev.mtu);
    if (fault_injected(FAULT_UD_SMALL_BUFFERS) && u->on_message)
        return u->buf_size;
#if ARMCI_MUTANT_IS(ud_recv_message_size)
    return u->buf_size; /* the bug: a datagram longer than a message fails a receive */
#endif
    return port > u->buf_size ? port : u->buf_size;
}

/* The QP and buffers of u, whose kind (who, callbacks, buf_size, send_tag) is set. */
static void create(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
                   int nsend, int nrecv, int max_recv, enum wr_tag recv_tag)
{
    const char *who = u->who;
    u->qkey = ud_job_qkey();
    u->sends_done_at_check = -1;
    struct ibv_qp_init_attr init = {
        .send_cq = send_ep->cq,
        .recv_cq = recv_ep->cq,
        .qp_type = IBV_QPT_UD,
        .cap = {.max_send_wr = (uint32_t)nsend,
                .max_recv_wr = (uint32_t)max_recv,
                .max_send_sge = 1,
                .max_recv_sge = 1},
    };
    u->qp = ibv_create_qp(vdev.pd, &init);
    if (!u->qp)
        armci_die("ARMCI_Init", "ibv_create_qp (UD channel of %s) failed: %s", who,
                  strerror(errno));
    const char *step;
    int rc = bring_up(u, &step);
    if (rc)
        armci_die("ARMCI_Init", "ibv_modify_qp %s (UD channel of %s) failed: %s", step, who,
                  strerror(rc));

    enum mem_kind kind = u->on_bytes ? MEM_BUF_DATAGRAM : MEM_BUF_CHANNEL;
    /* A data endpoint's datagrams are MTU-sized: a quarter at first, doubling while sends
     * wait for their completions (a send completes in microseconds). */
    buffer_pool_create(&u->send, "ARMCI_Init", "UD channel send buffers",
                       u->on_bytes ? MAX(nsend / 4, 1) : nsend, nsend, u->buf_size, false, kind);
    endpoint_on(send_ep, u->send_tag, on_send_done, u);
    snprintf(u->recv_what, sizeof(u->recv_what), "UD channel (%s) receive buffers", who);
    recv_pool_create(&u->recv, u->recv_what, kind, nrecv, max_recv, recv_buf_size(u), NULL, recv_ep,
                     recv_tag, on_datagram, u);
    u->recv.on_failure = on_receive_failed;
    recv_pool_attach_qp(&u->recv, u->qp);
}

void ud_create(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
               const char *who, int nrecv, cm_msg_fn on_message, void *ctx)
{
    *u = (struct ud_endpoint){.who = who,
                              .on_message = on_message,
                              .ctx = ctx,
                              .buf_size = UD_BUF_SIZE,
                              .send_tag = WR_TAG_UD_SEND};
#if ARMCI_MUTANT_IS(channel_receives_at_init)
    nrecv = UD_RECV_BUFS; /* the bug: every receive registered at init, as before */
#endif
    create(u, send_ep, recv_ep, UD_SEND_BUFS, nrecv, UD_RECV_BUFS, WR_TAG_UD_RECV);
}

void ud_create_data(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
                    const char *who, size_t datagram, int nsend, int nrecv, int max_recv,
                    ud_bytes_fn fn, void *ctx)
{
    *u = (struct ud_endpoint){.who = who,
                              .on_bytes = fn,
                              .ctx = ctx,
                              .buf_size = UD_GRH_BYTES + datagram,
                              .send_tag = WR_TAG_DGRAM};
    create(u, send_ep, recv_ep, nsend, nrecv, max_recv, WR_TAG_DGRAM);
}

void ud_grow_recv(struct ud_endpoint *u, int want)
{
    recv_pool_grow(&u->recv, want);
}

void ud_destroy(struct ud_endpoint *u)
{
    if (!u->qp)
        return;
    for (int i = 0; u->on_message && i < UD_SEND_BUFS; i++)
        drop_reply_ah(u, i);
    struct ibv_ah *ah;
    INTMAP_FOR_EACH(&u->ah, ah)
    if (ibv_destroy_ah(ah))
        armci_warn("ibv_destroy_ah failed: %s", strerror(errno));
    intmap_free(&u->ah);
    if (u->self_ah && ibv_destroy_ah(u->self_ah))
        armci_warn("ibv_destroy_ah failed: %s", strerror(errno));
    if (ibv_destroy_qp(u->qp))
        armci_warn("ibv_destroy_qp (UD channel) failed: %s", strerror(errno));
    recv_pool_destroy(&u->recv);
    buffer_pool_destroy(&u->send);
    *u = (struct ud_endpoint){0};
}

struct verbs_addr ud_addr(const struct ud_endpoint *u)
{
    return verbs_my_addr(u->qp->qp_num, 0);
}

static struct ibv_ah *ah_for(struct ud_endpoint *u, int peer_key, const struct verbs_addr *to)
{
    struct ibv_ah *ah = intmap_get(&u->ah, (uint32_t)peer_key);
    if (ah)
        return ah;
    struct ibv_ah_attr attr;
    verbs_fill_ah_attr(&attr, to);
    ah = ibv_create_ah(vdev.pd, &attr);
    if (!ah)
        armci_die(NULL, "ibv_create_ah (UD channel, peer %d) failed: %s", peer_key,
                  strerror(errno));
    intmap_put(&u->ah, (uint32_t)peer_key, ah);
    return ah;
}

bool ud_send(struct ud_endpoint *u, int peer_key, const struct verbs_addr *to,
             const struct cm_msg *msg)
{
    return ud_send_bytes(u, peer_key, to, msg, sizeof(*msg));
}

bool ud_send_bytes(struct ud_endpoint *u, int peer_key, const struct verbs_addr *to,
                   const void *data, size_t len)
{
    if (len > u->buf_size - UD_GRH_BYTES)
        armci_die(NULL, "UD channel (%s): a %zu-byte datagram is longer than its %zu bytes", u->who,
                  len, u->buf_size - UD_GRH_BYTES);
    if (u->send.free == 0)
        return false;
    post_datagram(u, ah_for(u, peer_key, to), to->qpn, data, len, peer_key);
    u->sent++;
    return true;
}

bool ud_reply(struct ud_endpoint *u, const struct ud_sender *to, const struct cm_msg *msg)
{
    if (u->send.free == 0)
        return false;
    struct verbs_addr addr = {.lid = to->lid, .qpn = to->qpn};
    if (to->has_gid)
        memcpy(addr.gid, to->gid, sizeof(addr.gid));
    struct ibv_ah_attr attr;
    verbs_fill_ah_attr(&attr, &addr);
    struct ibv_ah *ah = ibv_create_ah(vdev.pd, &attr);
    if (!ah) { /* an unreachable sender costs it its answer, not us our channel */
        armci_warn("ibv_create_ah (UD channel of %s, answering LID %u QP %u) failed: %s", u->who,
                   to->lid, to->qpn, strerror(errno));
        return false;
    }
    int i = post_datagram(u, ah, to->qpn, msg, sizeof(*msg), -1);
    u->reply_ah[i] = ah;
    u->sent++;
    return true;
}

/* Sends len bytes through a free send buffer (the caller saw one); the buffer's index. */
static int post_datagram(struct ud_endpoint *u, struct ibv_ah *ah, uint32_t qpn, const void *data,
                         size_t len, int peer_key)
{
    struct pool_buffer *b = buffer_pool_get(&u->send);
    memcpy(b->addr, data, len);
    struct ibv_sge sge = {.addr = (uintptr_t)b->addr, .length = (uint32_t)len, .lkey = b->lkey};
    struct ibv_send_wr wr = {
        /* The generation: a completion of before a reset must not free a buffer again. */
        .wr_id = wr_id_make((uint64_t)u->send_generation << 32 | (uint32_t)b->index, u->send_tag),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED,
        .wr = {.ud = {.ah = ah, .remote_qpn = qpn, .remote_qkey = u->qkey}},
    };
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(u->qp, &wr, &bad);
    if (rc)
        armci_die(NULL, "ibv_post_send (UD channel, to peer %d) failed: %s", peer_key,
                  strerror(rc));
    return b->index;
}
