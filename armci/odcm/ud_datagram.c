/*
 * Receiving on the UD channel: who sent a datagram, whether it has the
 * length of a connection message, and the helpers the two message handlers
 * (cm_server.c, ondemand.c) use to check the sender against the directory.
 * Anybody who can reach the QP number with the job's Q_Key can send here, so
 * nothing in a datagram is believed before it is checked. No verbs calls:
 * the fuzz target `ud` links this file with the handlers.
 */
#include <string.h>

#include "core/error.h"
#include "odcm/ud.h"
#include "verbs/device.h"

/* Warnings about refused datagrams per endpoint; the rest are only counted. */
#define REFUSE_WARNINGS 8

/* Whether the 20 bytes at h are an IPv4 header without options and with a valid checksum. */
static bool ipv4_header(const uint8_t *h)
{
    if (h[0] != 0x45)
        return false;
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += (uint32_t)h[i] << 8 | h[i + 1];
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return sum == 0xffff;
}

/*
 * The source GID of the GRH at grh. InfiniBand (and softib) write an IPv6-style
 * GRH; RoCEv2 over IPv4 puts an IPv4 header in its last 20 bytes instead (rxe,
 * mlx5), whose source address is the IPv4-mapped GID ::ffff:a.b.c.d.
 */
static bool grh_source_gid(const uint8_t *grh, uint8_t gid[16])
{
    const uint8_t *ip4 = grh + 20;
    bool ip6 = grh[0] >> 4 == 6;
    if (ipv4_header(ip4) || (!ip6 && ip4[0] == 0x45)) {
        memset(gid, 0, 10);
        gid[10] = gid[11] = 0xff;
        memcpy(gid + 12, ip4 + 12, 4);
        return true;
    }
    if (!ip6)
        return false;
    memcpy(gid, grh + 8, 16);
    return true;
}

void ud_refuse(struct ud_endpoint *u, const struct ud_sender *from, const char *why)
{
    /* Atomic: the data server's count is read by its process's main thread (tests). */
    long n = __atomic_add_fetch(&u->refused, 1, __ATOMIC_RELAXED);
    if (n > REFUSE_WARNINGS)
        return;
    armci_warn("UD channel (%s): dropped a datagram from QP %u, LID %u: %s%s", u->who, from->qpn,
               from->lid, why, n == REFUSE_WARNINGS ? " (no more such warnings)" : "");
}

void ud_deliver(struct ud_endpoint *u, const struct ibv_wc *wc, const void *buf)
{
    const uint8_t *b = buf;
    struct ud_sender from = {.qpn = wc->src_qp, .lid = wc->slid};
    if ((wc->wc_flags & IBV_WC_GRH) && wc->byte_len >= UD_GRH_BYTES)
        from.has_gid = grh_source_gid(b, from.gid);
    if (wc->byte_len >= UD_GRH_BYTES &&
        ud_probe_returned(u, &from, b + UD_GRH_BYTES, wc->byte_len - UD_GRH_BYTES))
        return;
    if (u->on_bytes) {
        if (wc->byte_len < UD_GRH_BYTES || wc->byte_len > u->buf_size) {
            ud_refuse(u, &from, "shorter than a GRH or longer than a buffer");
            return;
        }
        u->received++;
        u->on_bytes(u->ctx, &from, b + UD_GRH_BYTES, wc->byte_len - UD_GRH_BYTES);
        return;
    }
    if (wc->byte_len != UD_GRH_BYTES + sizeof(struct cm_msg)) {
        ud_refuse(u, &from, "not the length of a connection message");
        return;
    }
    struct cm_msg m;
    memcpy(&m, b + UD_GRH_BYTES, sizeof(m));
    u->received++;
    u->on_message(u->ctx, &from, &m);
}

bool ud_probe_returned(struct ud_endpoint *u, const struct ud_sender *from, const void *data,
                       size_t len)
{
    struct ud_probe p;
    if (u->probe_sent_at == 0 || len != sizeof(p) || !u->qp || from->qpn != u->qp->qp_num)
        return false;
    memcpy(&p, data, sizeof(p));
    if (p.magic != UD_PROBE_MAGIC || p.generation != u->send_generation)
        return false;
    u->probe_sent_at = 0;
    return true;
}

bool ud_sender_is(const struct ud_sender *from, const struct verbs_addr *a)
{
    if (from->qpn != a->qpn)
        return false;
    /* With GIDs in use the LID says nothing (0 on RoCE): the GRH must name the peer. */
    if (vdev.use_grh)
        return from->has_gid && memcmp(from->gid, a->gid, sizeof(a->gid)) == 0;
    return from->lid == a->lid;
}

bool ud_qp_addr_valid(const struct verbs_addr *qp, const struct verbs_addr *port)
{
    return qp->qpn != 0 && qp->qpn <= CM_QPN_MASK && qp->psn <= CM_QPN_MASK && qp->pad == 0 &&
           qp->lid == port->lid && memcmp(qp->gid, port->gid, sizeof(qp->gid)) == 0;
}

long ud_refused(const struct ud_endpoint *u)
{
    return __atomic_load_n(&u->refused, __ATOMIC_RELAXED);
}

long ud_restarts(const struct ud_endpoint *u)
{
    return __atomic_load_n(&u->restarts, __ATOMIC_RELAXED);
}
