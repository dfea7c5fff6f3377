/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every failure a verbs consumer must handle, with its completion status:
 * remote access (bad rkey, out of bounds, missing right, deregistered MR),
 * QP access flags, local protection, receive too small, RNR exhaustion,
 * transport retries (peer not ready, wrong PSN, wrong LID, no such QP),
 * flushing after an error, and CQ overrun. Where rxe (Linux 6.1) reports a
 * different status than the IB spec and mlx5, both are accepted.
 */
#include "common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUFSZ (1u << 16)

static struct t_dev dev;
static uint8_t *buf;
static struct ibv_mr *mr;

struct pair {
    struct ibv_cq *ca, *cb;
    struct ibv_qp *a, *b;
    struct t_addr aa, ba;
};

/* a -> b, both in this process; b's QP access flags are `acc_b`. */
static struct pair pair_up(int acc_b, int timeout, int retry, int rnr_retry)
{
    struct pair p;

    p.ca = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
    p.cb = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
    REQUIRE(p.ca && p.cb, "create_cq");
    p.a = t_qp(&dev, p.ca, IBV_QPT_RC, 8, NULL);
    p.b = t_qp(&dev, p.cb, IBV_QPT_RC, 8, NULL);
    t_addr_of(&dev, p.a, &p.aa);
    t_addr_of(&dev, p.b, &p.ba);
    REQUIRE(t_rc_init(p.a, T_ACCESS_ALL) == 0 && t_rc_init(p.b, acc_b) == 0, "INIT");
    REQUIRE(t_rc_rtr(&dev, p.a, &p.ba, 1) == 0 && t_rc_rtr(&dev, p.b, &p.aa, 1) == 0, "RTR");
    REQUIRE(t_rc_rts(p.a, p.aa.psn, timeout, retry, rnr_retry) == 0 &&
                t_rc_rts(p.b, p.ba.psn, timeout, retry, rnr_retry) == 0,
            "RTS");
    return p;
}

static void pair_down(struct pair *p)
{
    CHECK(ibv_destroy_qp(p->a) == 0 && ibv_destroy_qp(p->b) == 0, "destroy QPs");
    CHECK(ibv_destroy_cq(p->ca) == 0 && ibv_destroy_cq(p->cb) == 0, "destroy CQs");
}

static void both_in_error(struct pair *p, const char *what)
{
    CHECK(t_query(p->a).qp_state == IBV_QPS_ERR, "%s: requester QP in ERR", what);
    CHECK(t_query(p->b).qp_state == IBV_QPS_ERR, "%s: responder QP in ERR", what);
}

/* Remote access errors: the requester gets REM_ACCESS_ERR, both QPs go to
 * ERR, and everything outstanding on either side is flushed. */
static void remote_access(void)
{
    struct ibv_mr *ro = ibv_reg_mr(dev.pd, buf + 8192, 4096, IBV_ACCESS_REMOTE_READ);
    struct ibv_mr *wo =
        ibv_reg_mr(dev.pd, buf + 16384, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    struct ibv_mr *gone = ibv_reg_mr(dev.pd, buf + 20480, 4096, T_ACCESS_ALL);
    uint32_t gone_rkey = gone ? gone->rkey : 0;
    struct {
        const char *what;
        enum ibv_wr_opcode op;
        uint64_t addr;
        uint32_t rkey;
        uint32_t len;
    } cases[] = {
        {"bad rkey", IBV_WR_RDMA_WRITE, (uintptr_t)buf, mr->rkey ^ 0x5500, 16},
        {"write past the MR", IBV_WR_RDMA_WRITE, (uintptr_t)buf + BUFSZ - 8, mr->rkey, 16},
        {"read before the MR", IBV_WR_RDMA_READ, (uintptr_t)buf - 64, mr->rkey, 16},
        {"write without REMOTE_WRITE", IBV_WR_RDMA_WRITE, (uintptr_t)buf + 8192, ro->rkey, 16},
        {"read without REMOTE_READ", IBV_WR_RDMA_READ, (uintptr_t)buf + 16384, wo->rkey, 16},
        {"atomic without REMOTE_ATOMIC", IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)buf + 16384,
         wo->rkey, 8},
        {"deregistered MR", IBV_WR_RDMA_WRITE, (uintptr_t)buf + 20480, gone_rkey, 16},
    };

    REQUIRE(ro && wo && gone && ibv_dereg_mr(gone) == 0, "MRs");
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pair p = pair_up(T_ACCESS_ALL, 14, 7, 7);

        CHECK(t_post_recv(p.a, buf + 32768, 64, mr->lkey, 70) == 0, "recv on requester");
        CHECK(t_post_recv(p.b, buf + 32768, 64, mr->lkey, 71) == 0, "recv on responder");
        CHECK(t_post_send(p.a, cases[i].op, buf + 40000, cases[i].len, mr->lkey, cases[i].addr,
                          cases[i].rkey, IBV_SEND_SIGNALED, 1) == 0,
              "post %s", cases[i].what);
        CHECK(t_post_send(p.a, IBV_WR_SEND, buf + 40000, 8, mr->lkey, 0, 0, 0, 2) == 0,
              "post a send behind it");
        t_expect(p.ca, IBV_WC_REM_ACCESS_ERR, 1, cases[i].what);
        t_expect(p.ca, IBV_WC_WR_FLUSH_ERR, 0, "later WR and receive flushed");
        t_expect(p.ca, IBV_WC_WR_FLUSH_ERR, 0, "later WR and receive flushed");
        t_expect(p.cb, IBV_WC_WR_FLUSH_ERR, 71, "responder's receive flushed");
        both_in_error(&p, cases[i].what);
        pair_down(&p);
    }
    CHECK(ibv_dereg_mr(ro) == 0 && ibv_dereg_mr(wo) == 0, "dereg");
}

/* The responder QP's own access flags: REM_INV_REQ_ERR. */
static void qp_access(void)
{
    static const struct {
        int acc;
        enum ibv_wr_opcode op;
        uint32_t len;
    } cases[] = {
        {IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, IBV_WR_RDMA_WRITE, 16},
        {IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, IBV_WR_RDMA_READ, 16},
        {IBV_ACCESS_LOCAL_WRITE, IBV_WR_ATOMIC_CMP_AND_SWP, 8},
    };

    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pair p = pair_up(cases[i].acc, 14, 7, 7);

        CHECK(t_post_send(p.a, cases[i].op, buf + 40000, cases[i].len, mr->lkey, (uintptr_t)buf + 8,
                          mr->rkey, IBV_SEND_SIGNALED, 3) == 0,
              "post");
        t_expect(p.ca, IBV_WC_REM_INV_REQ_ERR, 3, "operation the responder QP does not allow");
        both_in_error(&p, "QP access flags");
        pair_down(&p);
    }
}

static void local_protection(void)
{
    struct ibv_mr *ro = ibv_reg_mr(dev.pd, buf + 8192, 4096, IBV_ACCESS_REMOTE_READ);
    struct pair p = pair_up(T_ACCESS_ALL, 14, 7, 7);
    struct ibv_wc wc;

    REQUIRE(ro, "reg");
    CHECK(t_post_send(p.a, IBV_WR_SEND, buf, 16, mr->lkey ^ 0x7700, 0, 0, IBV_SEND_SIGNALED, 4) ==
              0,
          "post with a bad lkey");
    REQUIRE(t_poll(p.ca, &wc), "completion");
    CHECK(wc.wr_id == 4 && (wc.status == IBV_WC_LOC_PROT_ERR ||
                            (!t_softib() && wc.status == IBV_WC_LOC_QP_OP_ERR)),
          "bad lkey: %s", ibv_wc_status_str(wc.status));
    CHECK(t_query(p.a).qp_state == IBV_QPS_ERR, "requester in ERR");
    CHECK(t_query(p.b).qp_state == IBV_QPS_RTS, "the responder never saw it");
    pair_down(&p);

    p = pair_up(T_ACCESS_ALL, 14, 7, 7);
    CHECK(t_post_send(p.a, IBV_WR_RDMA_READ, buf + 8192, 16, ro->lkey, (uintptr_t)buf, mr->rkey,
                      IBV_SEND_SIGNALED, 5) == 0,
          "post read into a read-only MR");
    t_expect(p.ca, IBV_WC_LOC_PROT_ERR, 5, "RDMA READ needs LOCAL_WRITE on the sink");
    pair_down(&p);
    CHECK(ibv_dereg_mr(ro) == 0, "dereg");
}

static void receive_too_small(void)
{
    struct pair p = pair_up(T_ACCESS_ALL, 14, 7, 7);
    struct ibv_wc wc;

    CHECK(t_post_recv(p.b, buf, 8, mr->lkey, 6) == 0, "post 8-byte receive");
    CHECK(t_post_recv(p.b, buf, 8, mr->lkey, 7) == 0, "and another");
    CHECK(t_post_send(p.a, IBV_WR_SEND, buf + 100, 16, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 8) == 0,
          "send 16 bytes");
    REQUIRE(t_poll(p.ca, &wc), "sender completion");
    CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR || (!t_softib() && wc.status == IBV_WC_REM_OP_ERR),
          "sender: %s", ibv_wc_status_str(wc.status));
    REQUIRE(t_poll(p.cb, &wc), "receiver completion");
    CHECK(wc.wr_id == 6 && (wc.status == IBV_WC_LOC_LEN_ERR ||
                            (!t_softib() && wc.status == IBV_WC_LOC_QP_OP_ERR)),
          "receiver: %s", ibv_wc_status_str(wc.status));
    t_expect(p.cb, IBV_WC_WR_FLUSH_ERR, 7, "the next receive is flushed");
    both_in_error(&p, "receive too small");
    pair_down(&p);
}

static void rnr(void)
{
    struct softib_counters c0, c1;
    struct pair p = pair_up(T_ACCESS_ALL, 14, 7, 1);

    t_counters(&c0);
    CHECK(t_post_send(p.a, IBV_WR_SEND, buf, 16, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 9) == 0,
          "send with no receive posted");
    t_expect(p.ca, IBV_WC_RNR_RETRY_EXC_ERR, 9, "RNR retries exhausted");
    CHECK(t_query(p.a).qp_state == IBV_QPS_ERR, "requester in ERR");
    CHECK(t_query(p.b).qp_state == IBV_QPS_RTS, "responder unaffected");
    if (t_softib()) {
        t_counters(&c1);
        CHECK(c1.rnr_retries - c0.rnr_retries == 1, "one RNR retry counted");
    }
    pair_down(&p);

    /* rnr_retry 7 waits for as long as it takes */
    p = pair_up(T_ACCESS_ALL, 14, 7, 7);
    CHECK(t_post_send(p.a, IBV_WR_SEND, buf, 16, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 10) == 0,
          "send, receive comes later");
    CHECK(t_quiet(p.ca, 0.02), "still waiting");
    CHECK(t_post_recv(p.b, buf + 1000, 64, mr->lkey, 11) == 0, "post the receive");
    t_expect(p.ca, IBV_WC_SUCCESS, 10, "delivered after RNR waits");
    t_expect(p.cb, IBV_WC_SUCCESS, 11, "received");
    pair_down(&p);
}

/* Nothing reaches the responder: RETRY_EXC_ERR after timeout x retry_cnt. */
static void lost(const char *what, struct pair *p)
{
    CHECK(t_post_send(p->a, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, (uintptr_t)buf + 4096, mr->rkey,
                      IBV_SEND_SIGNALED, 12) == 0,
          "post (%s)", what);
    t_expect(p->ca, IBV_WC_RETRY_EXC_ERR, 12, what);
    CHECK(t_query(p->a).qp_state == IBV_QPS_ERR, "%s: requester in ERR", what);
}

static void retries(void)
{
    struct ibv_qp_attr r = {.qp_state = IBV_QPS_RESET};
    struct pair p = pair_up(T_ACCESS_ALL, 8, 1, 7);
    struct t_addr wrong;

    /* responder back in INIT */
    CHECK(ibv_modify_qp(p.b, &r, IBV_QP_STATE) == 0 && t_rc_init(p.b, T_ACCESS_ALL) == 0,
          "responder to INIT");
    lost("responder not ready (INIT)", &p);
    pair_down(&p);

    /* responder expects another PSN */
    p = pair_up(T_ACCESS_ALL, 8, 1, 7);
    wrong = p.aa;
    wrong.psn = (p.aa.psn + 1000) & 0xffffff;
    CHECK(ibv_modify_qp(p.b, &r, IBV_QP_STATE) == 0 && t_rc_init(p.b, T_ACCESS_ALL) == 0 &&
              t_rc_rtr(&dev, p.b, &wrong, 1) == 0,
          "responder with another rq_psn");
    lost("PSN mismatch", &p);
    pair_down(&p);

    /* no QP with that number */
    p = pair_up(T_ACCESS_ALL, 8, 1, 7);
    wrong = p.ba;
    wrong.qpn = 0xfffff0;
    r.qp_state = IBV_QPS_RESET;
    CHECK(ibv_modify_qp(p.a, &r, IBV_QP_STATE) == 0 && t_rc_init(p.a, T_ACCESS_ALL) == 0 &&
              t_rc_rtr(&dev, p.a, &wrong, 1) == 0 && t_rc_rts(p.a, p.aa.psn, 8, 1, 7) == 0,
          "requester aimed at a QPN nobody has");
    lost("no such QP", &p);
    pair_down(&p);

    /* InfiniBand: the right QPN behind the wrong LID */
    if (dev.roce) {
        t_skip("wrong DLID (InfiniBand only)");
        return;
    }
    p = pair_up(T_ACCESS_ALL, 8, 1, 7);
    wrong = p.ba;
    wrong.lid = (uint16_t)(p.ba.lid + 100);
    CHECK(ibv_modify_qp(p.a, &r, IBV_QP_STATE) == 0 && t_rc_init(p.a, T_ACCESS_ALL) == 0 &&
              t_rc_rtr(&dev, p.a, &wrong, 1) == 0 && t_rc_rts(p.a, p.aa.psn, 8, 1, 7) == 0,
          "requester with a wrong DLID");
    lost("wrong DLID", &p);
    pair_down(&p);
}

static void cq_overrun(void)
{
    struct ibv_cq *small = ibv_create_cq(dev.ctx, 2, NULL, NULL, 0);
    struct ibv_cq *cb = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
    struct ibv_qp *a, *b;
    struct t_addr aa, ba;
    struct ibv_async_event ev;
    struct ibv_wc wc[16];
    int n, fl, cq_err = 0, events = 0;

    REQUIRE(small && cb, "create_cq");
    a = t_qp(&dev, small, IBV_QPT_RC, 16, NULL);
    b = t_qp(&dev, cb, IBV_QPT_RC, 16, NULL);
    t_addr_of(&dev, a, &aa);
    t_addr_of(&dev, b, &ba);
    REQUIRE(t_rc_connect(&dev, a, &ba, T_ACCESS_ALL) == 0 &&
                t_rc_connect(&dev, b, &aa, T_ACCESS_ALL) == 0,
            "connect");
    for (int i = 0; i < small->cqe + 3; i++)
        CHECK(t_post_send(a, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, (uintptr_t)buf + 64, mr->rkey,
                          IBV_SEND_SIGNALED, 100 + (uint64_t)i) == 0,
              "signaled write %d", i);
    CHECK(t_quiet(cb, 0.05), "let them complete"); /* and progress them under SOFTIB_DEFERRED */
    n = ibv_poll_cq(small, 16, wc);
    CHECK(n >= 1 && n <= small->cqe, "an overrun CQ holds at most cqe (%d) entries: %d", small->cqe,
          n);
    fl = fcntl(dev.ctx->async_fd, F_GETFL);
    fcntl(dev.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
    while (ibv_get_async_event(dev.ctx, &ev) == 0) {
        events++;
        if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == small)
            cq_err++;
        ibv_ack_async_event(&ev);
    }
    fcntl(dev.ctx->async_fd, F_SETFL, fl);
    CHECK(cq_err >= 1, "IBV_EVENT_CQ_ERR reported for the overrun CQ (%d events)", events);
    if (t_softib()) {
        struct softib_counters c;

        t_counters(&c);
        CHECK(c.cq_overruns >= 1, "overrun counted");
        CHECK(t_query(a).qp_state == IBV_QPS_ERR,
              "softib: the QP that lost a completion is in ERR");
    }
    CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0, "destroy");
    CHECK(ibv_destroy_cq(small) == 0 && ibv_destroy_cq(cb) == 0, "destroy CQs");
}

int main(void)
{
    t_dev_open(&dev);
    buf = t_alloc(BUFSZ);
    mr = ibv_reg_mr(dev.pd, buf, BUFSZ, T_ACCESS_ALL);
    REQUIRE(mr, "reg_mr");
    remote_access();
    qp_access();
    local_protection();
    receive_too_small();
    rnr();
    retries();
    cq_overrun();
    CHECK(ibv_dereg_mr(mr) == 0, "dereg");
    free(buf);
    t_dev_close(&dev);
    if (t_softib())
        CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
