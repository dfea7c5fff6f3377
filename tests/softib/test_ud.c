/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD between processes: the 40-byte GRH area, src_qp/slid, a reply built
 * with ibv_create_ah_from_wc, Q_Key mismatch and missing receive buffers
 * (silently dropped), and on softib: 20 % injected loss accounted exactly,
 * reordering, and datagrams larger than the MTU rejected.
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QKEY  0x11110000u
#define SLOT  2048 /* per receive buffer: 40 bytes of GRH + payload */
#define NLOSS 1000
#define NREO  200

struct ud_ep {
    struct t_dev d;
    struct ibv_cq *cq;  /* receives */
    struct ibv_cq *scq; /* sends */
    struct ibv_qp *qp;
    uint8_t *buf;
    struct ibv_mr *mr;
    struct t_addr me;
};

static void ep_up(struct ud_ep *e, int depth)
{
    struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_UD,
                                 .cap = {.max_send_wr = 16,
                                         .max_recv_wr = (uint32_t)depth,
                                         .max_send_sge = 1,
                                         .max_recv_sge = 1}};

    t_dev_open(&e->d);
    e->cq = ibv_create_cq(e->d.ctx, depth + 8, NULL, NULL, 0);
    e->scq = ibv_create_cq(e->d.ctx, 32, NULL, NULL, 0);
    REQUIRE(e->cq && e->scq, "create_cq");
    a.send_cq = e->scq;
    a.recv_cq = e->cq;
    e->qp = ibv_create_qp(e->d.pd, &a);
    REQUIRE(e->qp, "create UD QP");
    REQUIRE(t_ud_ready(e->qp, QKEY) == 0, "UD to RTS");
    e->buf = t_alloc((size_t)(depth + 1) * SLOT);
    e->mr = ibv_reg_mr(e->d.pd, e->buf, (size_t)(depth + 1) * SLOT, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(e->mr, "reg_mr");
    t_addr_of(&e->d, e->qp, &e->me);
}

static void ep_down(struct ud_ep *e)
{
    CHECK(ibv_destroy_qp(e->qp) == 0 && ibv_destroy_cq(e->cq) == 0 && ibv_destroy_cq(e->scq) == 0,
          "destroy");
    CHECK(ibv_dereg_mr(e->mr) == 0, "dereg");
    free(e->buf);
    t_dev_close(&e->d);
}

static void post_recvs(struct ud_ep *e, int n)
{
    for (int i = 0; i < n; i++)
        REQUIRE(t_post_recv(e->qp, e->buf + (size_t)i * SLOT, SLOT, e->mr->lkey, (uint64_t)i) == 0,
                "post_recv %d", i);
}

static int ud_send(struct ud_ep *e, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, void *p,
                   uint32_t len, uint64_t wr_id)
{
    struct ibv_sge sge = {(uintptr_t)p, len, e->mr->lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED},
                       *bad;

    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = qkey;
    return ibv_post_send(e->qp, &wr, &bad);
}

static struct ibv_ah *ah_to(struct ud_ep *e, const struct t_addr *peer, bool global)
{
    struct ibv_ah_attr av;
    struct ibv_ah *ah;

    t_av(&e->d, peer, &av);
    if (global && !av.is_global) {
        av.is_global = 1;
        av.grh.dgid = peer->gid;
        av.grh.sgid_index = (uint8_t)e->d.gid_index;
        av.grh.hop_limit = 1;
    }
    ah = ibv_create_ah(e->d.pd, &av);
    REQUIRE(ah, "create_ah");
    return ah;
}

/* Wait for n send completions. */
static void drain_sends(struct ud_ep *e, int n)
{
    struct ibv_wc wc;

    while (n > 0 && t_poll(e->scq, &wc)) {
        CHECK(wc.status == IBV_WC_SUCCESS, "UD send completion %s", ibv_wc_status_str(wc.status));
        n--;
    }
    CHECK(n == 0, "all UD sends completed");
}

/* ---- phase 1: addressing and GRH ---- */

static const uint32_t lens[] = {0, 1, 100, 1024};

static void receiver(int fd, void *arg)
{
    struct ud_ep e, nobuf;
    struct t_addr s;
    struct ibv_wc wc;
    struct ibv_ah *reply;
    (void)arg;

    ep_up(&e, 64);
    ep_up(&nobuf, 4); /* a second context: gets datagrams but posts nothing */
    post_recvs(&e, 16);
    t_send(fd, &e.me, sizeof(e.me));
    t_send(fd, &nobuf.me, sizeof(nobuf.me));
    t_recv(fd, &s, sizeof(s));
    t_sync(fd); /* sender sent the plain datagrams */
    for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        uint8_t *slot;

        REQUIRE(t_poll(e.cq, &wc) && wc.status == IBV_WC_SUCCESS, "datagram %u", i);
        slot = e.buf + wc.wr_id * SLOT;
        CHECK(wc.byte_len == lens[i] + 40, "byte_len %u counts the GRH (payload %u)", wc.byte_len,
              lens[i]);
        CHECK(wc.src_qp == s.qpn, "src_qp %u (sender %u)", wc.src_qp, s.qpn);
        CHECK(e.d.roce || wc.slid == s.lid, "slid %u is the sender's LID %u", wc.slid, s.lid);
        CHECK(!!(wc.wc_flags & IBV_WC_GRH) == e.d.roce, "GRH flag %#x (RoCE always has one)",
              wc.wc_flags);
        CHECK(t_same(slot + 40, lens[i], 50 + i), "payload after the 40-byte GRH area");
        if (i == 2) { /* answer the sender where the datagram came from */
            reply = ibv_create_ah_from_wc(e.d.pd, &wc, (struct ibv_grh *)slot, 1);
            CHECK(reply != NULL, "ibv_create_ah_from_wc");
            if (reply) {
                t_fill(e.buf + 60 * SLOT, 33, 9);
                CHECK(ud_send(&e, reply, wc.src_qp, QKEY, e.buf + 60 * SLOT, 33, 900) == 0,
                      "reply");
                drain_sends(&e, 1);
                CHECK(ibv_destroy_ah(reply) == 0, "destroy_ah");
            }
        }
    }
    t_sync(fd); /* global AH (IB) + wrong Q_Key + no buffer */
    if (!e.d.roce) {
        REQUIRE(t_poll(e.cq, &wc) && wc.status == IBV_WC_SUCCESS, "datagram via global AH");
        CHECK((wc.wc_flags & IBV_WC_GRH) && wc.byte_len == 64 + 40, "global AH: GRH present");
        CHECK(!memcmp(((struct ibv_grh *)(e.buf + wc.wr_id * SLOT))->sgid.raw, s.gid.raw, 16),
              "GRH carries the sender's GID");
    }
    CHECK(t_quiet(e.cq, 0.05), "the wrong Q_Key datagram was dropped");
    CHECK(t_quiet(nobuf.cq, 0.05), "no receive posted: nothing arrives");
    if (t_softib()) {
        struct softib_counters c;

        t_counters(&c);
        CHECK(c.ud_drops_nobuf == 2, "receiver counted 2 no-buffer drops (%llu)",
              (unsigned long long)c.ud_drops_nobuf);
    }
    t_sync(fd);
    ep_down(&nobuf);
    ep_down(&e);
}

static void sender_basic(struct ud_ep *e)
{
    struct t_child c = t_spawn(receiver, NULL);
    struct t_addr r, nb;
    struct ibv_ah *ah, *gah = NULL, *nbah;
    struct ibv_wc wc;
    uint8_t *p = e->buf + 62 * SLOT;

    t_recv(c.fd, &r, sizeof(r));
    t_recv(c.fd, &nb, sizeof(nb));
    t_send(c.fd, &e->me, sizeof(e->me));
    ah = ah_to(e, &r, false);
    nbah = ah_to(e, &nb, false);
    post_recvs(e, 2);
    for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        t_fill(p, lens[i], 50 + i);
        CHECK(ud_send(e, ah, r.qpn, QKEY, p, lens[i], 10 + i) == 0, "UD send %u", lens[i]);
        drain_sends(e, 1);
    }
    t_sync(c.fd);
    /* the receiver's reply */
    REQUIRE(t_poll(e->cq, &wc), "reply arrives");
    CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 33 + 40 &&
              t_same(e->buf + wc.wr_id * SLOT + 40, 33, 9),
          "reply via an AH made from the completion");
    if (!e->d.roce) {
        gah = ah_to(e, &r, true);
        t_fill(p, 64, 3);
        CHECK(ud_send(e, gah, r.qpn, QKEY, p, 64, 20) == 0, "send via global AH");
    }
    CHECK(ud_send(e, ah, r.qpn, QKEY + 1, p, 64, 21) == 0, "send with a wrong Q_Key");
    CHECK(ud_send(e, nbah, nb.qpn, QKEY, p, 64, 22) == 0, "send to a QP with no receive");
    CHECK(ud_send(e, nbah, nb.qpn, QKEY, p, 64, 23) == 0, "again");
    drain_sends(e, e->d.roce ? 3 : 4);
    if (t_softib()) {
        struct softib_counters cnt;

        t_counters(&cnt);
        CHECK(cnt.ud_drops_other == 1, "sender counted the Q_Key drop (%llu)",
              (unsigned long long)cnt.ud_drops_other);
        t_fill(p, 1, 0);
        errno = 0;
        CHECK(ud_send(e, ah, r.qpn, QKEY, p, 4097, 24) == EINVAL,
              "a datagram larger than the MTU is rejected");
    }
    t_sync(c.fd);
    t_sync(c.fd);
    t_join(&c);
    CHECK(ibv_destroy_ah(ah) == 0 && ibv_destroy_ah(nbah) == 0, "destroy_ah");
    if (gah)
        CHECK(ibv_destroy_ah(gah) == 0, "destroy_ah");
}

/* ---- phases 2, 3: a sender with loss or reordering (its own process,
 * since softib reads SOFTIB_* when a process first uses verbs) ---- */

struct lossy_arg {
    const char *var;
    const char *value;
    int n;
};

static void lossy_sender(int fd, void *arg)
{
    struct lossy_arg *a = arg;
    struct ud_ep e;
    struct t_addr r;
    struct ibv_ah *ah;
    struct softib_counters c;

    setenv(a->var, a->value, 1);
    setenv("SOFTIB_SEED", "12345", 1);
    ep_up(&e, 64);
    t_recv(fd, &r, sizeof(r));
    ah = ah_to(&e, &r, false);
    for (int i = 0; i < a->n; i++) {
        uint32_t seq = (uint32_t)i;

        memcpy(e.buf, &seq, sizeof(seq));
        t_fill(e.buf + 4, 60, (unsigned)i);
        REQUIRE(ud_send(&e, ah, r.qpn, QKEY, e.buf, 64, (uint64_t)i) == 0, "send %d", i);
        drain_sends(&e, 1);
    }
    t_counters(&c);
    t_send(fd, &c, sizeof(c));
    CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");
    ep_down(&e);
}

/* Sends n datagrams under var=value; receives into `recvs` buffers. Returns the arrivals; in
 * *order_breaks those that came after a later one, in *dups those that came a second time. */
static int lossy_run(struct ud_ep *e, const char *var, const char *value, int n, int recvs,
                     struct softib_counters *sc, int *order_breaks, int *dups)
{
    struct lossy_arg a = {var, value, n};
    struct t_child c;
    struct ibv_wc wc;
    int got = 0;
    uint32_t last = 0;
    bool *seen = calloc((size_t)n, 1);

    REQUIRE(seen, "calloc");
    post_recvs(e, recvs);
    c = t_spawn(lossy_sender, &a);
    t_send(c.fd, &e->me, sizeof(e->me));
    t_recv(c.fd, sc, sizeof(*sc));
    t_join(&c);
    *order_breaks = 0;
    *dups = 0;
    while (ibv_poll_cq(e->cq, 1, &wc) == 1) { /* all sends completed: all arrivals are in */
        uint8_t *slot = e->buf + wc.wr_id * SLOT + 40;
        uint32_t seq;

        memcpy(&seq, slot, sizeof(seq));
        CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 104 && seq < (uint32_t)n &&
                  t_same(slot + 4, 60, seq),
              "datagram %u intact", seq);
        if (seq < (uint32_t)n) {
            *dups += seen[seq];
            seen[seq] = true;
        }
        *order_breaks += got && seq < last;
        last = seq;
        got++;
    }
    free(seen);
    return got;
}

int main(void)
{
    struct ud_ep e;
    struct softib_counters sc;
    int got, breaks, dups;

    ep_up(&e, NLOSS);
    sender_basic(&e);
    ep_down(&e);

    ep_up(&e, NLOSS);
    got = lossy_run(&e, "SOFTIB_UD_LOSS", "0.2", NLOSS, NLOSS, &sc, &breaks, &dups);
    CHECK(dups == 0, "loss duplicates nothing (%d)", dups);
    if (t_softib()) {
        CHECK(got + (int)sc.ud_drops_injected == NLOSS,
              "received %d + injected drops %llu = %d sent", got,
              (unsigned long long)sc.ud_drops_injected, NLOSS);
        CHECK(sc.ud_drops_injected > 100 && sc.ud_drops_injected < 300, "about 20%% dropped (%llu)",
              (unsigned long long)sc.ud_drops_injected);
        CHECK(sc.ud_sends == NLOSS, "sender counted %d datagrams", NLOSS);
    } else {
        CHECK(got == NLOSS, "all %d datagrams arrived (%d)", NLOSS, got);
    }
    ep_down(&e);

    ep_up(&e, NREO);
    got = lossy_run(&e, "SOFTIB_UD_REORDER", "0.3", NREO, NREO, &sc, &breaks, &dups);
    CHECK(got == NREO && dups == 0, "reordering loses and duplicates nothing (%d of %d, %d twice)",
          got, NREO, dups);
    if (t_softib())
        CHECK(breaks > 0 && sc.ud_reordered > 0, "datagrams arrived out of order (%d, %llu)",
              breaks, (unsigned long long)sc.ud_reordered);
    ep_down(&e);

    /* Duplication: every datagram arrives, some twice, a copy after a later datagram. */
    ep_up(&e, 2 * NREO);
    got = lossy_run(&e, "SOFTIB_UD_DUP", "0.2", NREO, 2 * NREO, &sc, &breaks, &dups);
    CHECK(got - dups == NREO, "duplication loses nothing (%d distinct of %d)", got - dups, NREO);
    if (t_softib())
        CHECK(dups == (int)sc.ud_duplicated && dups > 15 && dups < 70 && breaks > 0,
              "about 20%% delivered twice, out of order (%d, counted %llu, %d order breaks)", dups,
              (unsigned long long)sc.ud_duplicated, breaks);
    ep_down(&e);
    if (t_softib())
        CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
