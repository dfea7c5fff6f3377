/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small verbs job for the fabric attacks: two processes, one RC
 * connection, RDMA WRITE, RDMA READ and SEND of checked patterns into a
 * buffer between guard pages. If the device cannot be opened it says so and
 * ends with status 2 (softib's own message names the fabric and what is
 * wrong with it). $SIB_JOB_HOOK, if set, is run with $SIB_JOB_FABRIC set
 * while both processes are on the fabric and their memory is registered:
 * it must succeed. $SIB_JOB_SAY_PIDS makes both processes print their pid
 * and parent's pid.
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEN   (64 << 10)
#define GUARD 4096

struct region {
    uint8_t *all;  /* guard, LEN bytes, guard */
    uint8_t *data; /* all + GUARD */
    struct ibv_mr *mr;
};

static bool open_or_say(struct t_dev *d)
{
    struct ibv_device **list = ibv_get_device_list(NULL);
    struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
    int err = errno;

    if (list)
        ibv_free_device_list(list);
    if (!ctx) {
        printf("job: cannot open the device: %s\n", strerror(err));
        return false;
    }
    CHECK(ibv_close_device(ctx) == 0, "close");
    t_dev_open(d);
    return true;
}

static void say_pids(const char *who)
{
    if (getenv("SIB_JOB_SAY_PIDS"))
        printf("job: %s pid %d ppid %d\n", who, (int)getpid(), (int)getppid());
}

static void region(struct t_dev *d, struct region *r, unsigned seed)
{
    r->all = t_alloc(LEN + 2 * GUARD);
    r->data = r->all + GUARD;
    t_fill(r->all, GUARD, seed);
    t_fill(r->data + LEN, GUARD, seed);
    /* only the middle is registered: the guards must never change */
    r->mr = ibv_reg_mr(d->pd, r->data, LEN, T_ACCESS_ALL);
    REQUIRE(r->mr, "reg_mr");
}

static void connect_to(struct t_dev *d, struct ibv_qp *qp, int fd, struct region *r,
                       struct t_addr *peer)
{
    struct t_addr me;

    t_addr_of(d, qp, &me);
    me.addr = (uintptr_t)r->data;
    me.rkey = r->mr->rkey;
    me.len = LEN;
    t_send(fd, &me, sizeof(me));
    t_recv(fd, peer, sizeof(*peer));
    REQUIRE(t_rc_connect(d, qp, peer, T_ACCESS_ALL) == 0, "connect");
}

/* The target: receives a SEND, then checks what the initiator wrote. */
static void target(int fd, void *arg)
{
    struct t_dev d;
    struct region r;
    struct t_addr peer;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    (void)arg;

    say_pids("target");
    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    REQUIRE(cq, "create_cq");
    qp = t_qp(&d, cq, IBV_QPT_RC, 8, NULL);
    region(&d, &r, 1);
    connect_to(&d, qp, fd, &r, &peer);
    REQUIRE(t_post_recv(qp, r.data + LEN / 2, LEN / 2, r.mr->lkey, 7) == 0, "recv");
    t_sync(fd); /* the initiator writes, reads and sends */
    t_expect(cq, IBV_WC_SUCCESS, 7, "SEND received");
    t_sync(fd);
    CHECK(t_same(r.all, GUARD, 1) && t_same(r.all + GUARD + LEN, GUARD, 1),
          "the guards around the target buffer are untouched");
    CHECK(t_same(r.data, LEN / 2, 2), "the RDMA WRITE arrived, byte for byte");
    CHECK(t_same(r.data + LEN / 2, LEN / 2, 3), "the SEND arrived, byte for byte");
    CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(r.mr) == 0,
          "teardown");
    free(r.all);
    t_dev_close(&d);
}

int main(void)
{
    const char *hook = getenv("SIB_JOB_HOOK");
    struct t_dev d;
    struct region r;
    struct t_addr peer;
    struct t_child c;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *back;

    setvbuf(stdout, NULL, _IOLBF, 0);
    say_pids("initiator");
    if (!open_or_say(&d))
        return 2;
    c = t_spawn(target, NULL);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    REQUIRE(cq, "create_cq");
    qp = t_qp(&d, cq, IBV_QPT_RC, 8, NULL);
    region(&d, &r, 4);
    connect_to(&d, qp, c.fd, &r, &peer);
    if (hook && *hook) {
        char path[256];

        REQUIRE(t_fabric_path(path, sizeof(path)), "the fabric is mapped");
        setenv("SIB_JOB_FABRIC", path, 1);
        fflush(stdout);
        CHECK(system(hook) == 0, "the hook (%s) succeeded", hook);
    }
    t_sync(c.fd);
    t_fill(r.data, LEN / 2, 2);
    REQUIRE(t_post_send(qp, IBV_WR_RDMA_WRITE, r.data, LEN / 2, r.mr->lkey, peer.addr, peer.rkey,
                        IBV_SEND_SIGNALED, 1) == 0,
            "post write");
    t_expect(cq, IBV_WC_SUCCESS, 1, "RDMA WRITE");
    back = r.data + LEN / 2;
    memset(back, 0, LEN / 2);
    REQUIRE(t_post_send(qp, IBV_WR_RDMA_READ, back, LEN / 2, r.mr->lkey, peer.addr, peer.rkey,
                        IBV_SEND_SIGNALED, 2) == 0,
            "post read");
    t_expect(cq, IBV_WC_SUCCESS, 2, "RDMA READ");
    CHECK(t_same(back, LEN / 2, 2), "the RDMA READ brought the bytes back");
    t_fill(r.data, LEN / 2, 3);
    REQUIRE(t_post_send(qp, IBV_WR_SEND, r.data, LEN / 2, r.mr->lkey, 0, 0, IBV_SEND_SIGNALED, 3) ==
                0,
            "post send");
    t_expect(cq, IBV_WC_SUCCESS, 3, "SEND");
    CHECK(t_same(r.all, GUARD, 4) && t_same(r.all + GUARD + LEN, GUARD, 4),
          "the guards around the initiator's buffer are untouched");
    t_sync(c.fd);
    t_join(&c);
    CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(r.mr) == 0,
          "teardown");
    free(r.all);
    t_dev_close(&d);
    CHECK(t_fabric_file_gone(), "no fabric file left behind");
    if (!t_failed)
        printf("job: ok\n");
    return t_summary();
}
