/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * softib's fault points, as hardware shows them to a verbs consumer:
 *   - SOFTIB_PORT_DOWN=AT:FOR: the port goes down AT ms after the device
 *     opens, for FOR ms. ibv_query_port says IBV_PORT_DOWN meanwhile, the
 *     context gets IBV_EVENT_PORT_ERR and then IBV_EVENT_PORT_ACTIVE; an RC
 *     request to or from a down port is retransmitted until its QP's
 *     timeout x retry count runs out (IBV_WC_RETRY_EXC_ERR, QP in ERR) and
 *     passes if the port comes back before that; a datagram is lost. A
 *     peer's port down does the same to the sender.
 *   - SOFTIB_RC_BREAK=P: an RC request finds its path broken with
 *     probability P: it fails with IBV_WC_RETRY_EXC_ERR at once, the QP
 *     goes to ERR and what follows is flushed.
 * softib only: these are softib's knobs (the -ibverbs build skips).
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUFSZ 4096
#define QKEY  0x11111111u
/* The window of the port-down cases: down 300 ms after open, for 1200 ms. */
#define DOWN_AT_MS  300
#define DOWN_FOR_MS 1200

struct rc_pair {
    struct ibv_cq *cq;
    struct ibv_qp *a, *b;
};

static double ms_since(double t0)
{
    return (t_now() - t0) * 1e3;
}

static void sleep_until_ms(double t0, double ms)
{
    while (ms_since(t0) < ms) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

/* Two RC QPs of one context joined to each other, with this timeout and retry count. */
static struct rc_pair rc_pair_up(struct t_dev *d, int timeout, int retry)
{
    struct rc_pair p;
    struct t_addr aa, ba;

    p.cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
    REQUIRE(p.cq, "create_cq");
    p.a = t_qp(d, p.cq, IBV_QPT_RC, 8, NULL);
    p.b = t_qp(d, p.cq, IBV_QPT_RC, 8, NULL);
    t_addr_of(d, p.a, &aa);
    t_addr_of(d, p.b, &ba);
    REQUIRE(t_rc_init(p.a, T_ACCESS_ALL) == 0 && t_rc_init(p.b, T_ACCESS_ALL) == 0, "INIT");
    REQUIRE(t_rc_rtr(d, p.a, &ba, 1) == 0 && t_rc_rtr(d, p.b, &aa, 1) == 0, "RTR");
    REQUIRE(t_rc_rts(p.a, aa.psn, timeout, retry, 7) == 0 &&
                t_rc_rts(p.b, ba.psn, timeout, retry, 7) == 0,
            "RTS");
    return p;
}

static void rc_pair_down(struct rc_pair *p)
{
    CHECK(ibv_destroy_qp(p->a) == 0 && ibv_destroy_qp(p->b) == 0, "destroy QPs");
    CHECK(ibv_destroy_cq(p->cq) == 0, "destroy CQ");
}

static enum ibv_port_state port_state(struct t_dev *d)
{
    struct ibv_port_attr pa;

    REQUIRE(ibv_query_port(d->ctx, 1, &pa) == 0, "query_port");
    return pa.state;
}

/* The next async event (the port's); polls a CQ first, which is when softib posts them. */
static enum ibv_event_type next_port_event(struct t_dev *d, struct ibv_cq *cq)
{
    struct ibv_async_event ev;
    struct ibv_wc wc;
    enum ibv_event_type type;

    (void)ibv_poll_cq(cq, 0, &wc);
    REQUIRE(ibv_get_async_event(d->ctx, &ev) == 0, "get_async_event");
    type = ev.event_type;
    CHECK(ev.element.port_num == 1, "the event names port 1");
    ibv_ack_async_event(&ev);
    return type;
}

/* This process's own port goes down: events, port state, RC and UD across the window. */
static void own_port(int fd, void *arg)
{
    char window[32];
    struct t_dev d;
    struct softib_counters c;
    (void)fd;
    (void)arg;

    snprintf(window, sizeof(window), "%d:%d", DOWN_AT_MS, DOWN_FOR_MS);
    setenv("SOFTIB_PORT_DOWN", window, 1);
    t_dev_open(&d);
    double t0 = t_now();
    uint8_t *buf = t_alloc(BUFSZ);
    struct ibv_mr *mr = ibv_reg_mr(d.pd, buf, BUFSZ, T_ACCESS_ALL);
    REQUIRE(mr, "reg_mr");
    /* retry budget ~2 ms (timeout 8: 1 ms, 1 retry); and ~2.1 s (timeout 16: 268 ms, 7 retries) */
    struct rc_pair quick = rc_pair_up(&d, 8, 1), patient = rc_pair_up(&d, 16, 7);
    CHECK(port_state(&d) == IBV_PORT_ACTIVE, "the port is active before the window");
    CHECK(t_post_send(quick.a, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, (uintptr_t)buf + 1024,
                      mr->rkey, IBV_SEND_SIGNALED, 1) == 0,
          "post before the window");
    t_expect(quick.cq, IBV_WC_SUCCESS, 1, "an RC write before the window");

    sleep_until_ms(t0, DOWN_AT_MS + 100);
    CHECK(next_port_event(&d, quick.cq) == IBV_EVENT_PORT_ERR, "IBV_EVENT_PORT_ERR");
    CHECK(port_state(&d) == IBV_PORT_DOWN, "the port is down in the window");
    CHECK(t_post_send(quick.a, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, (uintptr_t)buf + 1024,
                      mr->rkey, IBV_SEND_SIGNALED, 2) == 0,
          "post in the window");
    t_expect(quick.cq, IBV_WC_RETRY_EXC_ERR, 2, "a write whose retries end in the window");
    CHECK(t_query(quick.a).qp_state == IBV_QPS_ERR, "its QP is in ERR");

    /* A write whose retries outlast the window arrives once the port is back. */
    t_fill(buf, 64, 7);
    memset(buf + 2048, 0, 64);
    double posted = ms_since(t0);
    CHECK(t_post_send(patient.a, IBV_WR_RDMA_WRITE, buf, 64, mr->lkey, (uintptr_t)buf + 2048,
                      mr->rkey, IBV_SEND_SIGNALED, 3) == 0,
          "post in the window (patient QP)");
    t_expect(patient.cq, IBV_WC_SUCCESS, 3, "a write retransmitted through the window");
    double done = ms_since(t0);
    CHECK(done >= DOWN_AT_MS + DOWN_FOR_MS,
          "it completed after the window (posted at %.0f ms, "
          "done at %.0f ms)",
          posted, done);
    CHECK(t_same(buf + 2048, 64, 7), "its bytes arrived");

    CHECK(next_port_event(&d, patient.cq) == IBV_EVENT_PORT_ACTIVE, "IBV_EVENT_PORT_ACTIVE");
    CHECK(port_state(&d) == IBV_PORT_ACTIVE, "the port is active after the window");
    CHECK(t_counters(&c) == 0 && c.transport_retries > 0, "retransmissions counted (%llu)",
          (unsigned long long)c.transport_retries);
    rc_pair_down(&quick);
    rc_pair_down(&patient);
    ibv_dereg_mr(mr);
    free(buf);
    t_dev_close(&d);
}

/* A datagram sent while the port is down is lost (counted); one after the window arrives. */
static void own_port_ud(int fd, void *arg)
{
    struct t_dev d;
    struct softib_counters c;
    struct ibv_ah_attr av;
    struct t_addr ra;
    (void)fd;
    (void)arg;

    setenv("SOFTIB_PORT_DOWN", "0:400", 1);
    t_dev_open(&d);
    double t0 = t_now();
    uint8_t *buf = t_alloc(BUFSZ);
    struct ibv_mr *mr = ibv_reg_mr(d.pd, buf, BUFSZ, T_ACCESS_ALL);
    struct ibv_cq *cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    struct ibv_cq *rcq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    REQUIRE(mr && cq && rcq, "reg_mr, create_cq");
    struct ibv_qp *s = t_qp(&d, cq, IBV_QPT_UD, 8, NULL), *r = t_qp(&d, rcq, IBV_QPT_UD, 8, NULL);
    REQUIRE(t_ud_ready(s, QKEY) == 0 && t_ud_ready(r, QKEY) == 0, "UD QPs ready");
    t_addr_of(&d, r, &ra);
    t_av(&d, &ra, &av);
    struct ibv_ah *ah = ibv_create_ah(d.pd, &av);
    REQUIRE(ah, "create_ah");
    for (int k = 0; k < 2; k++) {
        struct ibv_sge sge = {(uintptr_t)buf + 1024, 64, mr->lkey};
        struct ibv_send_wr wr = {.wr_id = 10 + (uint64_t)k,
                                 .sg_list = &sge,
                                 .num_sge = 1,
                                 .opcode = IBV_WR_SEND,
                                 .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        wr.wr.ud.ah = ah;
        wr.wr.ud.remote_qpn = ra.qpn;
        wr.wr.ud.remote_qkey = QKEY;
        if (k == 1)
            sleep_until_ms(t0, 500);
        REQUIRE(t_post_recv(r, buf, 2048, mr->lkey, 20 + (uint64_t)k) == 0, "post_recv");
        CHECK(ibv_post_send(s, &wr, &bad) == 0, "post datagram %d", k);
        t_expect(cq, IBV_WC_SUCCESS, 10 + (uint64_t)k, "the send completes");
    }
    t_expect(rcq, IBV_WC_SUCCESS, 20, "one datagram arrived");
    CHECK(t_quiet(rcq, 0.1), "and only one");
    CHECK(t_counters(&c) == 0 && c.link_down_drops == 1, "one lost to the port (%llu)",
          (unsigned long long)c.link_down_drops);
    ibv_destroy_ah(ah);
    ibv_destroy_qp(s);
    ibv_destroy_qp(r);
    ibv_destroy_cq(cq);
    ibv_destroy_cq(rcq);
    ibv_dereg_mr(mr);
    free(buf);
    t_dev_close(&d);
}

/* One end of an RC connection between two processes: a device, a buffer, a CQ and a QP. */
struct rc_end {
    struct t_dev d;
    uint8_t *buf;
    struct ibv_mr *mr;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct t_addr me, peer;
};

/* Opens the device, makes the end and connects it over fd (the child sends its address first;
 * retry budget ~2 ms: timeout 8, 1 retry). */
static void rc_end_up(struct rc_end *e, int fd, bool child)
{
    t_dev_open(&e->d);
    e->buf = t_alloc(BUFSZ);
    e->mr = ibv_reg_mr(e->d.pd, e->buf, BUFSZ, T_ACCESS_ALL);
    e->cq = ibv_create_cq(e->d.ctx, 16, NULL, NULL, 0);
    REQUIRE(e->mr && e->cq, "reg_mr, create_cq");
    e->qp = t_qp(&e->d, e->cq, IBV_QPT_RC, 8, NULL);
    t_addr_of(&e->d, e->qp, &e->me);
    e->me.addr = (uintptr_t)e->buf;
    e->me.rkey = e->mr->rkey;
    if (child) {
        t_send(fd, &e->me, sizeof(e->me));
        t_recv(fd, &e->peer, sizeof(e->peer));
    } else {
        t_recv(fd, &e->peer, sizeof(e->peer));
        t_send(fd, &e->me, sizeof(e->me));
    }
    REQUIRE(t_rc_init(e->qp, T_ACCESS_ALL) == 0 && t_rc_rtr(&e->d, e->qp, &e->peer, 1) == 0 &&
                t_rc_rts(e->qp, e->me.psn, 8, 1, 7) == 0,
            "connect");
}

static void rc_end_down(struct rc_end *e)
{
    ibv_destroy_qp(e->qp);
    ibv_destroy_cq(e->cq);
    ibv_dereg_mr(e->mr);
    free(e->buf);
    t_dev_close(&e->d);
}

/* The peer's port down: the sender, whose own port is up, is the one that sees it. */
static void peer_with_port_down(int fd, void *arg)
{
    struct rc_end e;
    (void)arg;

    setenv("SOFTIB_PORT_DOWN", "0:1000", 1);
    rc_end_up(&e, fd, true);
    t_sync(fd); /* the sender has tried */
    rc_end_down(&e);
}

static void peer_port(void)
{
    struct rc_end e;
    struct t_child c = t_spawn(peer_with_port_down, NULL);

    rc_end_up(&e, c.fd, false);
    CHECK(port_state(&e.d) == IBV_PORT_ACTIVE, "the sender's own port stays active");
    CHECK(t_post_send(e.qp, IBV_WR_RDMA_WRITE, e.buf, 16, e.mr->lkey, e.peer.addr, e.peer.rkey,
                      IBV_SEND_SIGNALED, 5) == 0,
          "post to a peer whose port is down");
    t_expect(e.cq, IBV_WC_RETRY_EXC_ERR, 5, "a write to a down port exhausts its retries");
    t_sync(c.fd);
    t_join(&c);
    rc_end_down(&e);
}

/* SOFTIB_RC_BREAK=1: the first request breaks the path, the next is flushed. */
static void rc_break(int fd, void *arg)
{
    struct t_dev d;
    struct softib_counters c;
    (void)fd;
    (void)arg;

    setenv("SOFTIB_RC_BREAK", "1", 1);
    setenv("SOFTIB_SEED", "3", 1);
    t_dev_open(&d);
    uint8_t *buf = t_alloc(BUFSZ);
    struct ibv_mr *mr = ibv_reg_mr(d.pd, buf, BUFSZ, T_ACCESS_ALL);
    REQUIRE(mr, "reg_mr");
    struct rc_pair p = rc_pair_up(&d, 14, 7);
    CHECK(t_post_send(p.a, IBV_WR_RDMA_WRITE, buf, 16, mr->lkey, (uintptr_t)buf + 1024, mr->rkey,
                      IBV_SEND_SIGNALED, 1) == 0 &&
              t_post_send(p.a, IBV_WR_RDMA_READ, buf, 16, mr->lkey, (uintptr_t)buf + 1024, mr->rkey,
                          IBV_SEND_SIGNALED, 2) == 0,
          "post two");
    t_expect(p.cq, IBV_WC_RETRY_EXC_ERR, 1, "the first finds its path broken");
    t_expect(p.cq, IBV_WC_WR_FLUSH_ERR, 2, "the second is flushed");
    CHECK(t_query(p.a).qp_state == IBV_QPS_ERR, "the QP is in ERR");
    CHECK(t_counters(&c) == 0 && c.rc_breaks == 1, "one break counted (%llu)",
          (unsigned long long)c.rc_breaks);
    rc_pair_down(&p);
    ibv_dereg_mr(mr);
    free(buf);
    t_dev_close(&d);
}

int main(void)
{
    struct t_child c;

    if (!t_softib()) {
        t_skip("softib's fault knobs (SOFTIB_PORT_DOWN, SOFTIB_RC_BREAK)");
        return t_summary();
    }
    c = t_spawn(own_port, NULL);
    t_join(&c);
    c = t_spawn(own_port_ud, NULL);
    t_join(&c);
    peer_port();
    c = t_spawn(rc_break, NULL);
    t_join(&c);
    CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
