/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels across processes: a waiter blocked in
 * ibv_get_cq_event (really asleep, not spinning) is woken by a completion
 * another process generates; solicited-only arming; a non-blocking channel
 * fd. Then the runtime's threading pattern: a data-server thread that
 * posts a reply (which must wait out RNR) and blocks on its channel again,
 * while a client thread of the same process polls its own CQ.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ep {
    struct t_dev d;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *buf;
    struct ibv_mr *mr;
    struct t_addr me, peer;
};

static void ep_up(struct ep *e, int fd, bool channel, bool first)
{
    t_dev_open(&e->d);
    e->ch = channel ? ibv_create_comp_channel(e->d.ctx) : NULL;
    e->cq = ibv_create_cq(e->d.ctx, 64, (void *)0x5eed, e->ch, 0);
    REQUIRE(e->cq && (!channel || e->ch), "CQ and channel");
    e->qp = t_qp(&e->d, e->cq, IBV_QPT_RC, 32, NULL);
    e->buf = t_alloc(1 << 16);
    e->mr = ibv_reg_mr(e->d.pd, e->buf, 1 << 16, T_ACCESS_ALL);
    REQUIRE(e->mr, "reg_mr");
    t_addr_of(&e->d, e->qp, &e->me);
    e->me.addr = (uintptr_t)e->buf;
    e->me.rkey = e->mr->rkey;
    if (first) {
        t_send(fd, &e->me, sizeof(e->me));
        t_recv(fd, &e->peer, sizeof(e->peer));
    } else {
        t_recv(fd, &e->peer, sizeof(e->peer));
        t_send(fd, &e->me, sizeof(e->me));
    }
    REQUIRE(t_rc_connect(&e->d, e->qp, &e->peer, T_ACCESS_ALL) == 0, "connect");
}

static void ep_down(struct ep *e)
{
    CHECK(ibv_destroy_qp(e->qp) == 0 && ibv_destroy_cq(e->cq) == 0, "destroy");
    if (e->ch)
        CHECK(ibv_destroy_comp_channel(e->ch) == 0, "destroy channel");
    CHECK(ibv_dereg_mr(e->mr) == 0, "dereg");
    free(e->buf);
    t_dev_close(&e->d);
}

/* Block for an event on e->ch; check it names our CQ; ack; re-arm. */
static bool wait_event(struct ep *e)
{
    struct ibv_cq *cq = NULL;
    void *ctx = NULL;

    if (ibv_get_cq_event(e->ch, &cq, &ctx))
        return false;
    ibv_ack_cq_events(cq, 1);
    CHECK(cq == e->cq && ctx == (void *)0x5eed, "event names our CQ and its context");
    return cq == e->cq;
}

/* ---- cross-process wake-up ---- */

static void waiter(int fd, void *arg)
{
    struct ep e;
    struct ibv_wc wc;
    int fl;
    (void)arg;

    ep_up(&e, fd, true, false);
    for (int i = 0; i < 4; i++)
        REQUIRE(t_post_recv(e.qp, e.buf, 256, e.mr->lkey, 40 + (uint64_t)i) == 0, "recv");

    /* 1: block until the other process sends */
    CHECK(ibv_req_notify_cq(e.cq, 0) == 0, "arm");
    t_sync(fd);
    REQUIRE(wait_event(&e), "woken by a completion from another process");
    CHECK(t_poll(e.cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 40,
          "the completion is there");
    CHECK(ibv_poll_cq(e.cq, 1, &wc) == 0, "and only one");

    /* 2: solicited-only ignores an unsolicited completion */
    fl = fcntl(e.ch->fd, F_GETFL);
    CHECK(ibv_req_notify_cq(e.cq, 1) == 0, "arm solicited-only");
    t_sync(fd); /* peer sends an unsolicited message */
    t_sync(fd);
    CHECK(t_poll(e.cq, &wc) && wc.wr_id == 41, "unsolicited message received");
    fcntl(e.ch->fd, F_SETFL, fl | O_NONBLOCK);
    {
        struct ibv_cq *cq;
        void *ctx;

        errno = 0;
        CHECK(ibv_get_cq_event(e.ch, &cq, &ctx) == -1 && errno == EAGAIN,
              "no event for it: non-blocking fd says EAGAIN");
    }
    fcntl(e.ch->fd, F_SETFL, fl);
    t_sync(fd); /* peer sends a solicited message */
    REQUIRE(wait_event(&e), "woken by the solicited message");
    CHECK(t_poll(e.cq, &wc) && wc.wr_id == 42, "solicited message received");
    t_sync(fd);
    ep_down(&e);
}

static void cpu_and_state(pid_t pid, char *state, long *ticks)
{
    char path[64], buf[1024], *p;
    unsigned long ut = 0, st = 0;
    FILE *f;
    size_t n;

    *state = '?';
    *ticks = -1;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (!p ||
        sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", state, &ut, &st) != 3)
        return;
    *ticks = (long)(ut + st);
}

static void waker(void)
{
    struct t_child c = t_spawn(waiter, NULL);
    struct ep e;
    char state = '?';
    long t0, t1;
    double start;

    ep_up(&e, c.fd, false, true);
    t_sync(c.fd);
    /* the waiter is asleep in ibv_get_cq_event and burns no CPU */
    start = t_now();
    do {
        usleep(10000);
        cpu_and_state(c.pid, &state, &t0);
    } while (state != 'S' && t_now() - start < 10);
    CHECK(state == 'S', "waiter sleeps (state %c)", state);
    usleep(300000);
    cpu_and_state(c.pid, &state, &t1);
    CHECK(state == 'S' && t1 - t0 <= 10, "waiter used %ld ticks of CPU in 300 ms", t1 - t0);
    CHECK(t_post_send(e.qp, IBV_WR_SEND, e.buf, 16, e.mr->lkey, 0, 0, IBV_SEND_SIGNALED, 1) == 0,
          "send");
    t_expect(e.cq, IBV_WC_SUCCESS, 1, "send completes");

    t_sync(c.fd);
    CHECK(t_post_send(e.qp, IBV_WR_SEND, e.buf, 16, e.mr->lkey, 0, 0, IBV_SEND_SIGNALED, 2) == 0,
          "unsolicited send");
    t_expect(e.cq, IBV_WC_SUCCESS, 2, "send completes");
    t_sync(c.fd);
    t_sync(c.fd);
    CHECK(t_post_send(e.qp, IBV_WR_SEND, e.buf, 16, e.mr->lkey, 0, 0,
                      IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, 3) == 0,
          "solicited send");
    t_expect(e.cq, IBV_WC_SUCCESS, 3, "send completes");
    t_sync(c.fd);
    t_join(&c);
    ep_down(&e);
}

/* ---- data server thread + client thread in one process ---- */

#define ROUNDS 5
#define WRITES 300

struct server {
    struct ep srv; /* channel-driven, like the data server */
    struct ep cli; /* polled, like a client thread */
};

static void *server_thread(void *arg)
{
    struct server *s = arg;
    struct ibv_wc wc;
    int served = 0;

    for (;;) {
        CHECK(ibv_req_notify_cq(s->srv.cq, 0) == 0, "arm");
        /* pick up what arrived before arming, then block */
        while (ibv_poll_cq(s->srv.cq, 1, &wc) == 0)
            if (!wait_event(&s->srv))
                return NULL;
        if (!(wc.opcode & IBV_WC_RECV))
            continue; /* our own reply's completion */
        CHECK(wc.status == IBV_WC_SUCCESS, "request %s", ibv_wc_status_str(wc.status));
        if (wc.byte_len == 1) /* quit */
            break;
        CHECK(t_post_recv(s->srv.qp, s->srv.buf, 64, s->srv.mr->lkey, 7) == 0, "re-post");
        /* the client has no receive posted yet: this waits out RNR while we
         * are blocked in ibv_get_cq_event */
        CHECK(t_post_send(s->srv.qp, IBV_WR_SEND, s->srv.buf + 1024, 32, s->srv.mr->lkey, 0, 0,
                          IBV_SEND_SIGNALED, 8) == 0,
              "post reply");
        served++;
    }
    CHECK(served == ROUNDS, "served %d requests", served);
    return NULL;
}

static void *client_thread(void *arg)
{
    struct server *s = arg;
    struct ibv_wc wc;

    for (int i = 0; i < WRITES; i++) {
        t_fill(s->cli.buf, 256, (unsigned)i);
        if (t_post_send(s->cli.qp, IBV_WR_RDMA_WRITE, s->cli.buf, 256, s->cli.mr->lkey,
                        s->cli.peer.addr + 4096, s->cli.peer.rkey, IBV_SEND_SIGNALED, 9)) {
            CHECK(false, "client write %d", i);
            break;
        }
        if (!t_poll(s->cli.cq, &wc) || wc.status != IBV_WC_SUCCESS) {
            CHECK(false, "client write %d completion", i);
            break;
        }
    }
    return NULL;
}

static void server_process(int fd, void *arg)
{
    struct server s;
    pthread_t ts, tc;
    (void)arg;

    ep_up(&s.srv, fd, true, true);
    ep_up(&s.cli, fd, false, true);
    CHECK(t_post_recv(s.srv.qp, s.srv.buf, 64, s.srv.mr->lkey, 7) == 0, "first receive");
    t_sync(fd);
    pthread_create(&ts, NULL, server_thread, &s);
    pthread_create(&tc, NULL, client_thread, &s);
    pthread_join(tc, NULL);
    pthread_join(ts, NULL);
    t_sync(fd);
    ep_down(&s.cli);
    ep_down(&s.srv);
}

static void client_process(void)
{
    struct t_child c = t_spawn(server_process, NULL);
    struct ep toserver, target;

    ep_up(&toserver, c.fd, false, false);
    ep_up(&target, c.fd, false, false);
    t_sync(c.fd);
    for (int r = 0; r < ROUNDS; r++) {
        CHECK(t_post_send(toserver.qp, IBV_WR_SEND, toserver.buf, 16, toserver.mr->lkey, 0, 0,
                          IBV_SEND_SIGNALED, 1) == 0,
              "request %d", r);
        t_expect(toserver.cq, IBV_WC_SUCCESS, 1, "request sent");
        usleep(20000); /* the reply hits RNR until this receive exists */
        CHECK(t_post_recv(toserver.qp, toserver.buf + 512, 64, toserver.mr->lkey, 2) == 0,
              "receive for the reply");
        t_expect(toserver.cq, IBV_WC_SUCCESS, 2, "reply arrives");
    }
    CHECK(t_post_send(toserver.qp, IBV_WR_SEND, toserver.buf, 1, toserver.mr->lkey, 0, 0,
                      IBV_SEND_SIGNALED, 3) == 0,
          "quit");
    t_expect(toserver.cq, IBV_WC_SUCCESS, 3, "quit sent");
    t_sync(c.fd);
    t_join(&c);
    CHECK(t_same(target.buf + 4096, 256, WRITES - 1), "the client thread's last write landed");
    ep_down(&target);
    ep_down(&toserver);
}

int main(void)
{
    waker();
    client_process();
    if (t_softib())
        CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
