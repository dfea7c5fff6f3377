/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process SIGKILLed in the middle of traffic: its peer gets a transport
 * error (not a hang), and the fabric stays usable: a new pair connects and
 * runs, and on softib the dead process's contexts, QPs, CQs and MRs are
 * reclaimed. Done three times, so a victim may well die holding a lock.
 */
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEPTH 64

struct ep {
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *buf;
    struct ibv_mr *mr;
    struct t_addr me, peer;
};

/* Connect through the parent: send our address, get the peer's. */
static void ep_up(struct ep *e, int fd, int timeout, int retry)
{
    t_dev_open(&e->d);
    e->cq = ibv_create_cq(e->d.ctx, 4 * DEPTH, NULL, NULL, 0);
    REQUIRE(e->cq, "create_cq");
    e->qp = t_qp(&e->d, e->cq, IBV_QPT_RC, DEPTH, NULL);
    e->buf = t_alloc(1 << 20);
    e->mr = ibv_reg_mr(e->d.pd, e->buf, 1 << 20, T_ACCESS_ALL);
    REQUIRE(e->mr, "reg_mr");
    t_addr_of(&e->d, e->qp, &e->me);
    e->me.addr = (uintptr_t)e->buf;
    e->me.rkey = e->mr->rkey;
    t_send(fd, &e->me, sizeof(e->me));
    t_recv(fd, &e->peer, sizeof(e->peer));
    REQUIRE(t_rc_init(e->qp, T_ACCESS_ALL) == 0 && t_rc_rtr(&e->d, e->qp, &e->peer, 1) == 0 &&
                t_rc_rts(e->qp, e->me.psn, timeout, retry, 7) == 0,
            "connect");
}

static void ep_down(struct ep *e)
{
    CHECK(ibv_destroy_qp(e->qp) == 0 && ibv_destroy_cq(e->cq) == 0 && ibv_dereg_mr(e->mr) == 0,
          "teardown");
    free(e->buf);
    t_dev_close(&e->d);
}

/* The victim: keeps receiving and re-posting until it is killed. */
static void victim(int fd, void *arg)
{
    struct ep e;
    struct ibv_wc wc[16];
    (void)arg;

    ep_up(&e, fd, 14, 7);
    for (int i = 0; i < DEPTH; i++)
        REQUIRE(t_post_recv(e.qp, e.buf + (size_t)i * 1024, 1024, e.mr->lkey, (uint64_t)i) == 0,
                "recv");
    t_sync(fd);
    for (;;) {
        int n = ibv_poll_cq(e.cq, 16, wc);

        for (int i = 0; i < n; i++)
            if (wc[i].status == IBV_WC_SUCCESS && (wc[i].opcode & IBV_WC_RECV))
                t_post_recv(e.qp, e.buf + wc[i].wr_id * 1024, 1024, e.mr->lkey, wc[i].wr_id);
    }
}

/*
 * The survivor: RDMA writes and sends until its peer dies under it. Once the
 * parent may kill, only zero-length RDMA writes: they move nothing, yet must
 * fail too (a runtime asks with them whether its peer is still there), and
 * not keep succeeding for longer than any retransmission could take.
 */
static void survivor(int fd, void *arg)
{
    struct ep e;
    struct ibv_wc wc;
    enum ibv_wc_status err = IBV_WC_SUCCESS;
    long ok = 0;
    double give_up = 0;
    (void)arg;

    ep_up(&e, fd, 10, 2);
    t_sync(fd);
    while (err == IBV_WC_SUCCESS) {
        bool send = ok % 2, probe = ok >= 200;
        uint32_t len = probe ? 0 : 512;

        if (probe && !give_up)
            give_up = t_now() + t_timeout() / 4;
        if (probe && t_now() > give_up) {
            CHECK(false, "zero-length RDMA writes to a killed peer still succeed");
            break;
        }
        int rc = t_post_send(e.qp, send && !probe ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, e.buf, len,
                             e.mr->lkey, e.peer.addr + 4096, e.peer.rkey, IBV_SEND_SIGNALED, 1);

        if (rc) {
            CHECK(false, "post_send: %s", strerror(rc));
            break;
        }
        if (!t_poll(e.cq, &wc)) {
            CHECK(false, "no completion");
            break;
        }
        err = wc.status;
        if (err == IBV_WC_SUCCESS && ++ok == 200)
            t_sync(fd); /* traffic is flowing: the parent may kill now */
    }
    CHECK(ok >= 200, "traffic flowed before the kill (%ld ops)", ok);
    /* softib: the packets go nowhere; rxe NAKs from the dying QP instead */
    CHECK(err == IBV_WC_RETRY_EXC_ERR || (!t_softib() && err != IBV_WC_SUCCESS),
          "the survivor sees %s", ibv_wc_status_str(err));
    t_sync(fd); /* report, then stay alive (and on the fabric) until told */
    t_sync(fd);
    ep_down(&e);
}

/* A fresh pair after the kill: plain ping-pong. */
static void fresh(int fd, void *arg)
{
    struct ep e;
    bool first = arg != NULL;

    ep_up(&e, fd, 14, 7);
    for (int i = 0; i < 50; i++) {
        REQUIRE(t_post_recv(e.qp, e.buf, 64, e.mr->lkey, 2) == 0, "recv");
        t_sync(fd);
        if (first) {
            struct ibv_wc wc[2];

            CHECK(t_post_send(e.qp, IBV_WR_SEND, e.buf + 100, 64, e.mr->lkey, 0, 0,
                              IBV_SEND_SIGNALED, 1) == 0,
                  "send");
            /* the reply may overtake our send's completion, as an ACK can */
            CHECK(t_poll(e.cq, &wc[0]) && t_poll(e.cq, &wc[1]) && wc[0].status == 0 &&
                      wc[1].status == 0 && wc[0].wr_id + wc[1].wr_id == 3,
                  "new pair: send and reply");
        } else {
            t_expect(e.cq, IBV_WC_SUCCESS, 2, "new pair: receive");
            CHECK(t_post_send(e.qp, IBV_WR_SEND, e.buf + 100, 64, e.mr->lkey, 0, 0,
                              IBV_SEND_SIGNALED, 1) == 0,
                  "reply");
            t_expect(e.cq, IBV_WC_SUCCESS, 1, "new pair: reply sent");
        }
    }
    if (first && t_softib()) {
        struct softib_fabric_stats st;

        /* live: the survivor and this pair; the victim's share is gone */
        CHECK(t_fabric_stats(&st) == 0, "softib_fabric_stats");
        CHECK(st.contexts == 3 && st.qps == 3 && st.cqs == 3 && st.mrs == 3,
              "reclaimed: %u contexts, %u QPs, %u CQs, %u MRs", st.contexts, st.qps, st.cqs,
              st.mrs);
    }
    t_sync(fd);
    ep_down(&e);
}

/* Connect two children: each sends its address, gets the other's. */
static void relay(struct t_child *a, struct t_child *b)
{
    struct t_addr x, y;

    t_recv(a->fd, &x, sizeof(x));
    t_recv(b->fd, &y, sizeof(y));
    t_send(a->fd, &y, sizeof(y));
    t_send(b->fd, &x, sizeof(x));
}

static void round_(void)
{
    struct t_child s = t_spawn(survivor, NULL), v = t_spawn(victim, NULL), c, d;
    int status;

    relay(&s, &v);
    t_sync(v.fd);
    t_sync(s.fd); /* go */
    t_sync(s.fd); /* 200 operations done, more in flight */
    kill(v.pid, SIGKILL);
    waitpid(v.pid, &status, 0);
    close(v.fd);
    CHECK(WIFSIGNALED(status), "victim killed");
    t_sync(s.fd); /* the survivor saw its error */

    c = t_spawn(fresh, (void *)1);
    d = t_spawn(fresh, NULL);
    relay(&c, &d);
    for (int i = 0; i < 50; i++) {
        t_sync(c.fd);
        t_sync(d.fd);
    }
    t_sync(c.fd);
    t_sync(d.fd);
    t_join(&c);
    t_join(&d);
    t_sync(s.fd);
    t_join(&s);
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        round_();
    if (t_softib())
        CHECK(t_fabric_file_gone(), "the last process out removed the fabric file");
    return t_summary();
}
