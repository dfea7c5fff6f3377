/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two processes over RC: ping-pong of many sizes, scatter/gather on both
 * sides, inline sends, SEND and RDMA WRITE with immediate, unsignaled
 * completions and sq_sig_all, and an SRQ shared by three QPs.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF  (1u << 20)
#define NSRQ 3

static const uint32_t sizes[] = {1, 8, 100, 1023, 4096, 4097, 65536, BUF};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct side {
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *buf;
    struct ibv_mr *mr;
    struct t_addr me, peer;
};

static void side_up(struct side *s, int fd, bool first)
{
    t_dev_open(&s->d);
    s->cq = ibv_create_cq(s->d.ctx, 256, NULL, NULL, 0);
    REQUIRE(s->cq, "create_cq");
    s->qp = t_qp(&s->d, s->cq, IBV_QPT_RC, 64, NULL);
    s->buf = t_alloc(2 * BUF);
    s->mr = ibv_reg_mr(s->d.pd, s->buf, 2 * BUF, T_ACCESS_ALL);
    REQUIRE(s->mr, "reg_mr");
    t_addr_of(&s->d, s->qp, &s->me);
    s->me.addr = (uintptr_t)s->buf;
    s->me.rkey = s->mr->rkey;
    s->me.len = 2 * BUF;
    if (first) {
        t_send(fd, &s->me, sizeof(s->me));
        t_recv(fd, &s->peer, sizeof(s->peer));
    } else {
        t_recv(fd, &s->peer, sizeof(s->peer));
        t_send(fd, &s->me, sizeof(s->me));
    }
    REQUIRE(t_rc_connect(&s->d, s->qp, &s->peer, T_ACCESS_ALL) == 0, "connect");
}

static void side_down(struct side *s)
{
    CHECK(ibv_destroy_qp(s->qp) == 0, "destroy_qp");
    CHECK(ibv_destroy_cq(s->cq) == 0, "destroy_cq");
    CHECK(ibv_dereg_mr(s->mr) == 0, "dereg_mr");
    free(s->buf);
    t_dev_close(&s->d);
}

/* Wait for the next receive completion (send completions are skipped). */
static bool next_recv(struct ibv_cq *cq, struct ibv_wc *wc)
{
    do {
        if (!t_poll(cq, wc))
            return false;
        CHECK(wc->status == IBV_WC_SUCCESS, "completion status %s", ibv_wc_status_str(wc->status));
    } while (!(wc->opcode & IBV_WC_RECV));
    return true;
}

/* ---- B: echoes, then serves the SRQ part ---- */

static void echo_side(int fd, void *arg)
{
    struct side s;
    struct ibv_wc wc;
    (void)arg;

    side_up(&s, fd, false);
    for (unsigned i = 0; i < NSIZES; i++) {
        REQUIRE(t_post_recv(s.qp, s.buf, BUF, s.mr->lkey, 100 + i) == 0, "post_recv");
        t_sync(fd);
        REQUIRE(next_recv(s.cq, &wc), "receive %u", sizes[i]);
        CHECK(wc.wr_id == 100 + i && wc.byte_len == sizes[i], "byte_len %u (want %u)", wc.byte_len,
              sizes[i]);
        CHECK(t_same(s.buf, sizes[i], i), "payload of %u bytes", sizes[i]);
        CHECK(t_post_send(s.qp, IBV_WR_SEND, s.buf, sizes[i], s.mr->lkey, 0, 0, IBV_SEND_SIGNALED,
                          200 + i) == 0,
              "echo");
        /* a poll also progresses the send under SOFTIB_DEFERRED */
        t_expect(s.cq, IBV_WC_SUCCESS, 200 + i, "echo sent");
    }

    /* scatter: 4 receive SGEs of odd sizes, 1+2+3+rest */
    {
        struct ibv_sge sge[4] = {
            {(uintptr_t)s.buf + 1, 1, s.mr->lkey},
            {(uintptr_t)s.buf + 10, 2, s.mr->lkey},
            {(uintptr_t)s.buf + 100, 3, s.mr->lkey},
            {(uintptr_t)s.buf + 1001, 994, s.mr->lkey},
        };
        struct ibv_recv_wr rwr = {.wr_id = 7, .sg_list = sge, .num_sge = 4}, *bad;
        uint8_t want[1000];

        REQUIRE(ibv_post_recv(s.qp, &rwr, &bad) == 0, "post 4-SGE receive");
        t_sync(fd);
        REQUIRE(next_recv(s.cq, &wc), "gathered send");
        CHECK(wc.byte_len == 1000, "gathered length %u", wc.byte_len);
        t_fill(want, sizeof(want), 77);
        CHECK(!memcmp(s.buf + 1, want, 1) && !memcmp(s.buf + 10, want + 1, 2) &&
                  !memcmp(s.buf + 100, want + 3, 3) && !memcmp(s.buf + 1001, want + 6, 994),
              "scatter/gather byte-exact");
    }

    /* inline, send with immediate, write with immediate */
    REQUIRE(t_post_recv(s.qp, s.buf, 64, s.mr->lkey, 8) == 0, "recv");
    REQUIRE(t_post_recv(s.qp, s.buf + 64, 64, s.mr->lkey, 9) == 0, "recv");
    REQUIRE(t_post_recv(s.qp, s.buf, 1, s.mr->lkey, 10) == 0, "recv for write-imm");
    t_sync(fd);
    REQUIRE(next_recv(s.cq, &wc), "inline send");
    CHECK(wc.wr_id == 8 && wc.byte_len == 48 && t_same(s.buf, 48, 5), "inline payload");
    REQUIRE(next_recv(s.cq, &wc), "send with imm");
    CHECK(wc.wr_id == 9 && (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0xabc0de),
          "send with immediate: flags %#x imm %#x", wc.wc_flags, wc.imm_data);
    REQUIRE(next_recv(s.cq, &wc), "write with imm");
    CHECK(wc.wr_id == 10 && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == 3000 &&
              (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0xabc0de),
          "RECV_RDMA_WITH_IMM: opcode %d len %u", wc.opcode, wc.byte_len);
    CHECK(t_same(s.buf + BUF + 5, 3000, 9), "written payload at the target address");
    t_sync(fd); /* A's unsignaled writes */
    t_sync(fd);
    side_down(&s);
}

/* ---- A: drives ---- */

static void pingpong(struct side *s, int fd)
{
    struct ibv_wc wc;

    for (unsigned i = 0; i < NSIZES; i++) {
        t_fill(s->buf + BUF, sizes[i], i);
        memset(s->buf, 0, sizes[i]);
        REQUIRE(t_post_recv(s->qp, s->buf, BUF, s->mr->lkey, 300 + i) == 0, "post_recv");
        t_sync(fd);
        REQUIRE(t_post_send(s->qp, IBV_WR_SEND, s->buf + BUF, sizes[i], s->mr->lkey, 0, 0,
                            IBV_SEND_SIGNALED, 400 + i) == 0,
                "send %u", sizes[i]);
        REQUIRE(next_recv(s->cq, &wc), "echo of %u", sizes[i]);
        CHECK(wc.byte_len == sizes[i] && t_same(s->buf, sizes[i], i), "echo of %u byte-exact",
              sizes[i]);
    }
}

static void gather_send(struct side *s, int fd)
{
    uint8_t *src = s->buf + BUF;
    struct ibv_sge sge[3] = {
        {(uintptr_t)src + 3, 500, s->mr->lkey},
        {(uintptr_t)src + 1000, 1, s->mr->lkey},
        {(uintptr_t)src + 2001, 499, s->mr->lkey},
    };
    struct ibv_send_wr wr = {
        .wr_id = 11, .sg_list = sge, .num_sge = 3, .opcode = IBV_WR_SEND, .send_flags = 0};
    struct ibv_send_wr *bad;
    uint8_t want[1000];

    t_fill(want, sizeof(want), 77);
    memcpy(src + 3, want, 500);
    memcpy(src + 1000, want + 500, 1);
    memcpy(src + 2001, want + 501, 499);
    t_sync(fd);
    CHECK(ibv_post_send(s->qp, &wr, &bad) == 0, "3-SGE send (unsignaled)");
    CHECK(t_quiet(s->cq, 0.01), "no completion for it"); /* polling progresses it */
}

static void imm_and_inline(struct side *s, int fd)
{
    uint8_t *src = s->buf + BUF;
    struct ibv_wc wc;
    int sends = 0;

    t_sync(fd);
    t_fill(src, 48, 5);
    CHECK(t_post_send(s->qp, IBV_WR_SEND, src, 48, s->mr->lkey, 0, 0,
                      IBV_SEND_INLINE | IBV_SEND_SIGNALED, 20) == 0,
          "inline send");
    memset(src, 0xee, 48); /* inline data was copied at post time */
    CHECK(t_post_send(s->qp, IBV_WR_SEND_WITH_IMM, src, 8, s->mr->lkey, 0, 0, IBV_SEND_SIGNALED,
                      21) == 0,
          "send with imm");
    t_fill(src + 100, 3000, 9);
    CHECK(t_post_send(s->qp, IBV_WR_RDMA_WRITE_WITH_IMM, src + 100, 3000, s->mr->lkey,
                      s->peer.addr + BUF + 5, s->peer.rkey, IBV_SEND_SIGNALED, 22) == 0,
          "write with imm");
    while (sends < 3 && t_poll(s->cq, &wc)) {
        if (wc.opcode & IBV_WC_RECV)
            continue;
        CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)(20 + sends),
              "send completion %d in order", sends);
        sends++;
    }
    CHECK(sends == 3, "3 send completions");
}

/* Unsignaled WRs produce no completion; the signaled one after them does. */
static void unsignaled(struct side *s, int fd)
{
    t_sync(fd);
    for (int i = 0; i < 10; i++)
        CHECK(t_post_send(s->qp, IBV_WR_RDMA_WRITE, s->buf + BUF, 64, s->mr->lkey,
                          s->peer.addr + BUF + 8192, s->peer.rkey, 0, 500 + i) == 0,
              "unsignaled write");
    CHECK(t_post_send(s->qp, IBV_WR_RDMA_WRITE, s->buf + BUF, 64, s->mr->lkey,
                      s->peer.addr + BUF + 8192, s->peer.rkey, IBV_SEND_SIGNALED, 510) == 0,
          "signaled write");
    t_expect(s->cq, IBV_WC_SUCCESS, 510, "only the signaled write completes");
    CHECK(t_quiet(s->cq, 0.05), "no completion for unsignaled WRs");
    t_sync(fd);
}

static void drive_side(int fd)
{
    struct softib_counters c0, c1;
    struct side s;

    side_up(&s, fd, true);
    t_counters(&c0);
    pingpong(&s, fd);
    gather_send(&s, fd);
    imm_and_inline(&s, fd);
    unsignaled(&s, fd);
    if (t_softib()) {
        t_counters(&c1);
        CHECK(c1.sends - c0.sends == NSIZES + 3, "sends counted (%llu)",
              (unsigned long long)(c1.sends - c0.sends));
        CHECK(c1.rdma_writes - c0.rdma_writes == 12, "RDMA writes counted");
        CHECK(c1.recvs - c0.recvs == NSIZES, "receives counted");
        CHECK(c1.qp_live_rc == 1, "one live RC QP");
    }
    side_down(&s);
}

/* ---- SRQ: B owns one SRQ behind three QPs ---- */

static void srq_server(int fd, void *arg)
{
    struct t_dev d;
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = 32, .max_sge = 1}};
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    struct ibv_qp *qp[NSRQ];
    struct t_addr me[NSRQ], peer[NSRQ];
    uint8_t *buf = t_alloc(32 * 256);
    struct ibv_mr *mr;
    struct ibv_srq_attr lim = {.srq_limit = 8};
    struct ibv_async_event ev;
    bool seen[NSRQ] = {false};
    struct ibv_wc wc;
    int got = 0;
    (void)arg;

    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
    srq = ibv_create_srq(d.pd, &sa);
    mr = ibv_reg_mr(d.pd, buf, 32 * 256, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(cq && srq && mr, "SRQ setup");
    for (int i = 0; i < 12; i++) {
        struct ibv_sge sge = {(uintptr_t)buf + (uint64_t)i * 256, 256, mr->lkey};
        struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1}, *bad;

        REQUIRE(ibv_post_srq_recv(srq, &wr, &bad) == 0, "post_srq_recv");
    }
    CHECK(ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT) == 0, "arm the SRQ limit at 8");
    for (int i = 0; i < NSRQ; i++) {
        qp[i] = t_qp(&d, cq, IBV_QPT_RC, 8, srq);
        t_addr_of(&d, qp[i], &me[i]);
    }
    t_send(fd, me, sizeof(me));
    t_recv(fd, peer, sizeof(peer));
    for (int i = 0; i < NSRQ; i++)
        REQUIRE(t_rc_connect(&d, qp[i], &peer[i], IBV_ACCESS_LOCAL_WRITE) == 0, "connect");
    t_sync(fd);
    while (got < 2 * NSRQ && t_poll(cq, &wc)) {
        CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 100, "SRQ receive");
        CHECK(t_same(buf + wc.wr_id * 256, 100, 40), "SRQ payload byte-exact");
        for (int i = 0; i < NSRQ; i++)
            if (wc.qp_num == qp[i]->qp_num)
                seen[i] = true;
        got++;
    }
    CHECK(got == 2 * NSRQ, "all %d messages through the SRQ", 2 * NSRQ);
    CHECK(seen[0] && seen[1] && seen[2], "completions name each QP");
    CHECK(ibv_get_async_event(d.ctx, &ev) == 0 && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
              ev.element.srq == srq,
          "SRQ limit event");
    ibv_ack_async_event(&ev);
    t_sync(fd);
    for (int i = 0; i < NSRQ; i++)
        CHECK(ibv_destroy_qp(qp[i]) == 0, "destroy");
    CHECK(ibv_destroy_srq(srq) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0,
          "teardown");
    free(buf);
    t_dev_close(&d);
}

static void srq_client(int fd)
{
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp[NSRQ];
    struct t_addr me[NSRQ], peer[NSRQ];
    uint8_t *buf = t_alloc(4096);
    struct ibv_mr *mr;

    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
    mr = ibv_reg_mr(d.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(cq && mr, "client setup");
    for (int i = 0; i < NSRQ; i++) {
        qp[i] = t_qp(&d, cq, IBV_QPT_RC, 8, NULL);
        t_addr_of(&d, qp[i], &me[i]);
    }
    t_recv(fd, peer, sizeof(peer));
    t_send(fd, me, sizeof(me));
    for (int i = 0; i < NSRQ; i++)
        REQUIRE(t_rc_connect(&d, qp[i], &peer[i], IBV_ACCESS_LOCAL_WRITE) == 0, "connect");
    t_sync(fd);
    t_fill(buf, 100, 40);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < NSRQ; i++)
            CHECK(t_post_send(qp[i], IBV_WR_SEND, buf, 100, mr->lkey, 0, 0, IBV_SEND_SIGNALED,
                              (uint64_t)i) == 0,
                  "send to the SRQ");
    for (int i = 0; i < 2 * NSRQ; i++)
        t_expect(cq, IBV_WC_SUCCESS, 0, "SRQ send completes");
    t_sync(fd);
    for (int i = 0; i < NSRQ; i++)
        CHECK(ibv_destroy_qp(qp[i]) == 0, "destroy");
    CHECK(ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0, "teardown");
    free(buf);
    t_dev_close(&d);
}

int main(void)
{
    struct t_child b = t_spawn(echo_side, NULL);

    drive_side(b.fd);
    t_join(&b);
    b = t_spawn(srq_server, NULL);
    srq_client(b.fd);
    t_join(&b);
    if (t_softib())
        CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
