/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided operations against a target that is blocked in sleep() the
 * whole time: RDMA WRITE and READ from 1 B to 8 MiB at odd offsets, then
 * N processes doing FETCH_AND_ADD and CMP_AND_SWP on the same words. The
 * target only wakes at the end (SIGUSR1) to check its own memory.
 */
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB   (1u << 20)
#define TBUF  (24 * MIB)
#define NWORK 3

static const uint32_t sizes[] = {1, 3, 7, 65, 4095, 4097, 65537, MIB + 3, 8 * MIB};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint64_t region_off(unsigned i) /* odd offsets, regions never overlap */
{
    uint64_t off = 1;

    for (unsigned k = 0; k < i; k++)
        off += sizes[k] + 4096 + 2 * k + 1;
    return off | 1;
}

/* ---- write/read sweep ---- */

struct target_info {
    struct t_addr qp;
    pid_t pid;
};

static void rw_target(int fd, void *arg)
{
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *buf = t_alloc(TBUF);
    struct ibv_mr *mr;
    struct target_info me;
    struct t_addr peer;
    unsigned ok = 0;
    (void)arg;

    t_catch_usr1();
    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    qp = t_qp(&d, cq, IBV_QPT_RC, 16, NULL);
    mr = ibv_reg_mr(d.pd, buf, TBUF, T_ACCESS_ALL);
    REQUIRE(cq && mr, "target setup");
    t_addr_of(&d, qp, &me.qp);
    me.qp.addr = (uintptr_t)buf;
    me.qp.rkey = mr->rkey;
    me.qp.len = TBUF;
    me.pid = getpid();
    t_send(fd, &me, sizeof(me));
    t_recv(fd, &peer, sizeof(peer));
    REQUIRE(t_rc_connect(&d, qp, &peer, T_ACCESS_ALL) == 0, "target connect");
    t_sync(fd);
    sleep(3600); /* the initiator reads and writes our memory meanwhile */
    for (unsigned i = 0; i < NSIZES; i++)
        ok += t_same(buf + region_off(i), sizes[i], 1000 + i);
    CHECK(ok == NSIZES, "target sees %u of %zu written regions", ok, NSIZES);
    t_send(fd, &ok, sizeof(ok));
    CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0,
          "target teardown");
    free(buf);
    t_dev_close(&d);
}

static void rw_sweep(void)
{
    struct t_child c = t_spawn(rw_target, NULL);
    struct target_info t;
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *src = t_alloc(9 * MIB), *dst = t_alloc(9 * MIB);
    struct ibv_mr *ms, *md;
    struct t_addr me;
    unsigned seen = 0;

    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    qp = t_qp(&d, cq, IBV_QPT_RC, 16, NULL);
    ms = ibv_reg_mr(d.pd, src, 9 * MIB, IBV_ACCESS_LOCAL_WRITE);
    md = ibv_reg_mr(d.pd, dst, 9 * MIB, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(cq && ms && md, "initiator setup");
    t_recv(c.fd, &t, sizeof(t));
    t_addr_of(&d, qp, &me);
    t_send(c.fd, &me, sizeof(me));
    REQUIRE(t_rc_connect(&d, qp, &t.qp, IBV_ACCESS_LOCAL_WRITE) == 0, "initiator connect");
    t_sync(c.fd);
    t_wait_asleep(t.pid);
    for (unsigned i = 0; i < NSIZES; i++) {
        uint64_t raddr = t.qp.addr + region_off(i);

        t_fill(src + 5, sizes[i], 1000 + i);
        memset(dst, 0, sizes[i] + 3);
        CHECK(t_post_send(qp, IBV_WR_RDMA_WRITE, src + 5, sizes[i], ms->lkey, raddr, t.qp.rkey,
                          IBV_SEND_SIGNALED, 1) == 0,
              "post write %u", sizes[i]);
        t_expect(cq, IBV_WC_SUCCESS, 1, "RDMA WRITE");
        CHECK(t_post_send(qp, IBV_WR_RDMA_READ, dst + 3, sizes[i], md->lkey, raddr, t.qp.rkey,
                          IBV_SEND_SIGNALED, 2) == 0,
              "post read %u", sizes[i]);
        t_expect(cq, IBV_WC_SUCCESS, 2, "RDMA READ");
        CHECK(t_same(dst + 3, sizes[i], 1000 + i), "read back %u bytes at odd offset %llu",
              sizes[i], (unsigned long long)region_off(i));
        CHECK(t_in_sleep(t.pid), "the target is still blocked in sleep()");
    }
    kill(t.pid, SIGUSR1);
    t_recv(c.fd, &seen, sizeof(seen));
    CHECK(seen == NSIZES, "the target found every write in its memory");
    t_join(&c);
    CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0, "teardown");
    CHECK(ibv_dereg_mr(ms) == 0 && ibv_dereg_mr(md) == 0, "dereg");
    free(src);
    free(dst);
    t_dev_close(&d);
}

/* ---- atomics from several processes ---- */

struct atomic_target {
    struct t_addr qp[NWORK];
    pid_t pid;
};

static int iters(void)
{
    return t_slow() ? 20 : 400;
}

static void atomic_target(int fd, void *arg)
{
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp[NWORK];
    uint64_t *words = t_alloc(4096);
    struct ibv_mr *mr;
    struct atomic_target me;
    struct t_addr peer[NWORK];
    uint64_t want = (uint64_t)NWORK * (uint64_t)iters();
    (void)arg;

    t_catch_usr1();
    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    mr = ibv_reg_mr(d.pd, words, 4096, T_ACCESS_ALL);
    REQUIRE(cq && mr, "atomic target setup");
    for (int i = 0; i < NWORK; i++) {
        qp[i] = t_qp(&d, cq, IBV_QPT_RC, 4, NULL);
        t_addr_of(&d, qp[i], &me.qp[i]);
        me.qp[i].addr = (uintptr_t)&words[5]; /* fetch-add word; words[9] for cmp-swap */
        me.qp[i].rkey = mr->rkey;
    }
    me.pid = getpid();
    t_send(fd, &me, sizeof(me));
    t_recv(fd, peer, sizeof(peer));
    for (int i = 0; i < NWORK; i++)
        REQUIRE(t_rc_connect(&d, qp[i], &peer[i], T_ACCESS_ALL) == 0, "connect");
    t_sync(fd);
    sleep(3600);
    CHECK(words[5] == want, "fetch-add word = %llu, want %llu", (unsigned long long)words[5],
          (unsigned long long)want);
    CHECK(words[9] == want, "cmp-swap word = %llu, want %llu", (unsigned long long)words[9],
          (unsigned long long)want);
    t_sync(fd);
    for (int i = 0; i < NWORK; i++)
        CHECK(ibv_destroy_qp(qp[i]) == 0, "destroy");
    CHECK(ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0, "teardown");
    free(words);
    t_dev_close(&d);
}

static void atomic_worker(int fd, void *arg)
{
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint64_t *res = t_alloc(4096);
    uint64_t *seen = calloc((size_t)iters(), sizeof(uint64_t));
    struct ibv_mr *mr;
    struct t_addr me, peer;
    struct ibv_sge sge;
    struct ibv_send_wr wr, *bad;
    uint64_t guess = 0;
    int swaps = 0, tries = 0;
    (void)arg;

    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    qp = t_qp(&d, cq, IBV_QPT_RC, 4, NULL);
    mr = ibv_reg_mr(d.pd, res, 4096, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(cq && mr && seen, "worker setup");
    t_addr_of(&d, qp, &me);
    t_send(fd, &me, sizeof(me));
    t_recv(fd, &peer, sizeof(peer));
    REQUIRE(t_rc_connect(&d, qp, &peer, IBV_ACCESS_LOCAL_WRITE) == 0, "worker connect");
    t_sync(fd); /* go */
    memset(&wr, 0, sizeof(wr));
    sge.addr = (uintptr_t)&res[1];
    sge.length = 8;
    sge.lkey = mr->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.atomic.rkey = peer.rkey;
    for (int k = 0; k < iters(); k++) {
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.wr.atomic.remote_addr = peer.addr;
        wr.wr.atomic.compare_add = 1;
        REQUIRE(ibv_post_send(qp, &wr, &bad) == 0, "post fetch-add");
        REQUIRE(t_expect(cq, IBV_WC_SUCCESS, 0, "fetch-add"), "fetch-add completion");
        seen[k] = res[1];
    }
    /* increment with compare-and-swap: retry with what we found */
    while (swaps < iters()) {
        wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
        wr.wr.atomic.remote_addr = peer.addr + 4 * sizeof(uint64_t);
        wr.wr.atomic.compare_add = guess;
        wr.wr.atomic.swap = guess + 1;
        REQUIRE(ibv_post_send(qp, &wr, &bad) == 0, "post cmp-swap");
        REQUIRE(t_expect(cq, IBV_WC_SUCCESS, 0, "cmp-swap"), "cmp-swap completion");
        if (res[1] == guess)
            swaps++;
        guess = res[1] == guess ? guess + 1 : res[1];
        tries++;
    }
    t_send(fd, seen, (size_t)iters() * sizeof(uint64_t));
    CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0,
          "worker teardown");
    free(seen);
    free(res);
    t_dev_close(&d);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void atomics(void)
{
    struct t_child tc = t_spawn(atomic_target, NULL), w[NWORK];
    struct atomic_target t;
    struct t_addr wa[NWORK];
    size_t total = (size_t)NWORK * (size_t)iters();
    uint64_t *all = calloc(total, sizeof(uint64_t));
    bool exact = true;

    REQUIRE(all, "calloc");
    t_recv(tc.fd, &t, sizeof(t));
    for (int i = 0; i < NWORK; i++) {
        w[i] = t_spawn(atomic_worker, NULL);
        t_recv(w[i].fd, &wa[i], sizeof(wa[i]));
        t_send(w[i].fd, &t.qp[i], sizeof(t.qp[i]));
    }
    t_send(tc.fd, wa, sizeof(wa));
    t_sync(tc.fd); /* target connected */
    t_wait_asleep(t.pid);
    for (int i = 0; i < NWORK; i++)
        t_sync(w[i].fd);
    for (int i = 0; i < NWORK; i++) {
        t_recv(w[i].fd, all + (size_t)i * (size_t)iters(), (size_t)iters() * sizeof(uint64_t));
        t_join(&w[i]);
    }
    /* every fetch-add saw a different value: 0 .. total-1 exactly once */
    qsort(all, total, sizeof(uint64_t), cmp_u64);
    for (size_t i = 0; i < total; i++)
        exact = exact && all[i] == i;
    CHECK(exact, "fetch-add results are a permutation of 0..%zu", total - 1);
    CHECK(t_in_sleep(t.pid), "the atomic target slept throughout");
    kill(t.pid, SIGUSR1);
    t_sync(tc.fd);
    t_join(&tc);
    free(all);
}

int main(void)
{
    rw_sweep();
    atomics();
    if (t_softib())
        CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
