/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pid reuse: a target process T registers memory at a fixed address and
 * connects QPs, then dies (SIGKILL, reaped). A new process R gets T's pid
 * and maps the same address. Every kind of transfer to T's QPs and rkey —
 * RDMA WRITE, a chain of WRITEs (one batch), RDMA READ, SEND, FETCH_AND_ADD
 * and a UD datagram — must fail (RC: IBV_WC_RETRY_EXC_ERR, the responder
 * is gone; UD: dropped) and R's memory must be untouched.
 *
 * Twice: once after a successful transfer to T (the requester holds a
 * pidfd of T when it dies), once with no transfer before (the requester
 * meets R's pid first and must tell it apart from T by its start time).
 *
 * Run as pid 1 of a fresh pid namespace (pid-reuse.sh: unshare --pid
 * --fork --mount-proc), where /proc/sys/kernel/ns_last_pid hands out the
 * pid we want (without it, forks until the pid comes round: the namespace
 * is ours, so that disturbs nobody).
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define AREA      ((void *)0x7e5500000000ull)
#define AREA_LEN  (64 << 10)
#define NQP       5 /* RC: write, chain, read, send, atomic */
#define CHAIN     4
#define T_PATTERN 0x54
#define R_PATTERN 0x52
#define M_PATTERN 0x4d

enum { Q_WRITE, Q_CHAIN, Q_READ, Q_SEND, Q_ATOMIC };

struct target_addr {
    struct t_addr rc[NQP];
    struct t_addr ud;
    uint64_t area;
    uint32_t rkey;
};

static uint8_t *map_area(uint8_t fill)
{
    uint8_t *p = mmap(AREA, AREA_LEN, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

    REQUIRE(p == AREA, "mmap at %p", AREA);
    memset(p, fill, AREA_LEN);
    return p;
}

/* T: QPs and memory at AREA, then waits to be killed. */
static void target(int fd, void *arg)
{
    struct ibv_qp *rc[NQP], *ud;
    struct target_addr me;
    struct t_addr peer[NQP];
    struct ibv_mr *mr;
    struct ibv_cq *cq;
    struct t_dev d;
    uint8_t *area;
    (void)arg;

    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
    REQUIRE(cq, "create_cq");
    area = map_area(T_PATTERN);
    mr = ibv_reg_mr(d.pd, area, AREA_LEN, T_ACCESS_ALL);
    REQUIRE(mr, "reg_mr");
    for (int i = 0; i < NQP; i++) {
        rc[i] = t_qp(&d, cq, IBV_QPT_RC, 16, NULL);
        t_addr_of(&d, rc[i], &me.rc[i]);
    }
    ud = t_qp(&d, cq, IBV_QPT_UD, 16, NULL);
    REQUIRE(t_ud_ready(ud, 0x1111) == 0, "UD ready");
    t_addr_of(&d, ud, &me.ud);
    me.area = (uintptr_t)area;
    me.rkey = mr->rkey;
    t_send(fd, &me, sizeof(me));
    t_recv(fd, peer, sizeof(peer));
    for (int i = 0; i < NQP; i++)
        REQUIRE(t_rc_init(rc[i], T_ACCESS_ALL) == 0 && t_rc_rtr(&d, rc[i], &peer[i], 1) == 0 &&
                    t_rc_rts(rc[i], me.rc[i].psn, 14, 7, 7) == 0,
                "target connect");
    /* receives land in the area too: a SEND or datagram would write there */
    REQUIRE(t_post_recv(rc[Q_SEND], area + 8192, 4096, mr->lkey, 1) == 0, "recv");
    REQUIRE(t_post_recv(ud, area + 16384, 4096 + 40, mr->lkey, 2) == 0, "recv");
    t_sync(fd);
    for (;;)
        pause();
}

/* R: maps AREA with its own pattern, then checks it when told. */
static void reuser(int in, int out)
{
    uint8_t *area = mmap(AREA, AREA_LEN, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    char c = 'r';
    size_t bad = 0;

    if (area != AREA)
        _exit(3);
    memset(area, R_PATTERN, AREA_LEN);
    if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
        _exit(4);
    for (size_t i = 0; i < AREA_LEN; i++)
        bad += area[i] != R_PATTERN;
    if (bad)
        fprintf(stderr, "FAIL [%d] reuser: %zu bytes of its memory were changed\n", (int)getpid(),
                bad);
    _exit(bad ? 1 : 0);
}

static void on_alarm(int sig)
{
    (void)sig;
    (void)!write(2, "FAIL: timed out\n", 16);
    _exit(1);
}

/* Fork R with pid `want`: ns_last_pid if we may, else fork until it comes round. */
static pid_t spawn_reuser(pid_t want, int *to_r, int *from_r)
{
    int a[2], b[2];
    char buf[32];
    pid_t pid;
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);

    REQUIRE(pipe(a) == 0 && pipe(b) == 0, "pipe");
    if (fd >= 0) {
        int n = snprintf(buf, sizeof(buf), "%d", (int)want - 1);

        if (write(fd, buf, (size_t)n) != n)
            printf("ns_last_pid not writable (%s): forking until pid %d comes round\n",
                   strerror(errno), (int)want);
        close(fd);
    }
    fflush(stdout);
    fflush(stderr);
    for (;;) {
        pid = fork();
        REQUIRE(pid >= 0, "fork");
        if (pid == 0) {
            if (getpid() != want)
                _exit(0);
            close(a[1]);
            close(b[0]);
            reuser(a[0], b[1]);
        }
        if (pid == want)
            break;
        waitpid(pid, NULL, 0);
    }
    close(a[0]);
    close(b[1]);
    *to_r = a[1];
    *from_r = b[0];
    return pid;
}

static void connect_all(struct t_dev *d, struct ibv_qp **rc, const struct target_addr *t)
{
    for (int i = 0; i < NQP; i++)
        REQUIRE(t_rc_init(rc[i], T_ACCESS_ALL) == 0 && t_rc_rtr(d, rc[i], &t->rc[i], 1) == 0 &&
                    t_rc_rts(rc[i], (rc[i]->qp_num * 7) & 0xffffff, 1, 1, 0) == 0,
                "connect");
}

static void round_(bool touch_first)
{
    struct ibv_qp *rc[NQP], *ud;
    struct t_addr mine[NQP];
    struct target_addr t;
    struct softib_counters c0, c1;
    struct ibv_mr *mr;
    struct ibv_cq *cq;
    struct t_child tc;
    struct t_dev d;
    pid_t victim, r;
    uint8_t *buf, *sink;
    int to_r, from_r, status;
    char c;

    printf("round: %s\n",
           touch_first ? "a transfer to T before it dies" : "no transfer to T before it dies");
    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
    REQUIRE(cq, "create_cq");
    buf = t_alloc(1 << 16);
    memset(buf, M_PATTERN, 1 << 16);
    sink = buf + 32768;
    memset(sink, 0, 16384);
    mr = ibv_reg_mr(d.pd, buf, 1 << 16, T_ACCESS_ALL);
    REQUIRE(mr, "reg_mr");
    for (int i = 0; i < NQP; i++) {
        rc[i] = t_qp(&d, cq, IBV_QPT_RC, 16, NULL);
        t_addr_of(&d, rc[i], &mine[i]);
    }
    ud = t_qp(&d, cq, IBV_QPT_UD, 16, NULL);
    REQUIRE(t_ud_ready(ud, 0x1111) == 0, "UD ready");

    tc = t_spawn(target, NULL);
    t_recv(tc.fd, &t, sizeof(t));
    t_send(tc.fd, mine, sizeof(mine));
    connect_all(&d, rc, &t);
    t_sync(tc.fd);
    if (touch_first) {
        REQUIRE(t_post_send(rc[Q_WRITE], IBV_WR_RDMA_WRITE, buf, 8, mr->lkey, t.area, t.rkey,
                            IBV_SEND_SIGNALED, 1) == 0,
                "post");
        t_expect(cq, IBV_WC_SUCCESS, 1, "a write to the live target");
    }
    usleep(30000); /* T's and R's start times (clock ticks) must differ */
    victim = tc.pid;
    kill(victim, SIGKILL);
    waitpid(victim, &status, 0);
    close(tc.fd);
    CHECK(WIFSIGNALED(status), "T killed and reaped");

    r = spawn_reuser(victim, &to_r, &from_r);
    REQUIRE(read(from_r, &c, 1) == 1, "R is ready");
    printf("T was pid %d; R now has pid %d and memory at %p\n", (int)victim, (int)r, AREA);
    t_counters(&c0);

    REQUIRE(t_post_send(rc[Q_WRITE], IBV_WR_RDMA_WRITE, buf, 4096, mr->lkey, t.area + 4096, t.rkey,
                        IBV_SEND_SIGNALED, 10) == 0,
            "post write");
    t_expect(cq, IBV_WC_RETRY_EXC_ERR, 10, "RDMA WRITE to a dead target's rkey");
    {
        struct ibv_sge sge[CHAIN];
        struct ibv_send_wr wr[CHAIN], *bad;

        for (int i = 0; i < CHAIN; i++) {
            sge[i] = (struct ibv_sge){
                .addr = (uintptr_t)buf + (size_t)i * 1024, .length = 1024, .lkey = mr->lkey};
            wr[i] = (struct ibv_send_wr){.wr_id = 20 + (uint64_t)i,
                                         .next = i + 1 < CHAIN ? &wr[i + 1] : NULL,
                                         .sg_list = &sge[i],
                                         .num_sge = 1,
                                         .opcode = IBV_WR_RDMA_WRITE,
                                         .send_flags = IBV_SEND_SIGNALED};
            wr[i].wr.rdma.remote_addr = t.area + (uint64_t)i * 1024;
            wr[i].wr.rdma.rkey = t.rkey;
        }
        REQUIRE(ibv_post_send(rc[Q_CHAIN], wr, &bad) == 0, "post chain");
        t_expect(cq, IBV_WC_RETRY_EXC_ERR, 20, "a chain of WRITEs (one batch): the head");
        for (int i = 1; i < CHAIN; i++)
            t_expect(cq, IBV_WC_WR_FLUSH_ERR, 20 + (uint64_t)i, "a chain of WRITEs: the rest");
    }
    REQUIRE(t_post_send(rc[Q_READ], IBV_WR_RDMA_READ, sink, 4096, mr->lkey, t.area, t.rkey,
                        IBV_SEND_SIGNALED, 30) == 0,
            "post read");
    t_expect(cq, IBV_WC_RETRY_EXC_ERR, 30, "RDMA READ from a dead target's rkey");
    REQUIRE(
        t_post_send(rc[Q_SEND], IBV_WR_SEND, buf, 4096, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 40) == 0,
        "post send");
    t_expect(cq, IBV_WC_RETRY_EXC_ERR, 40, "SEND to a dead target's posted receive");
    REQUIRE(t_post_send(rc[Q_ATOMIC], IBV_WR_ATOMIC_FETCH_AND_ADD, sink + 8192, 8, mr->lkey,
                        t.area + 64, t.rkey, IBV_SEND_SIGNALED, 50) == 0,
            "post atomic");
    t_expect(cq, IBV_WC_RETRY_EXC_ERR, 50, "FETCH_AND_ADD on a dead target's rkey");
    {
        struct ibv_ah_attr av;
        struct ibv_ah *ah;
        struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 1024, .lkey = mr->lkey};
        struct ibv_send_wr wr = {.wr_id = 60,
                                 .sg_list = &sge,
                                 .num_sge = 1,
                                 .opcode = IBV_WR_SEND,
                                 .send_flags = IBV_SEND_SIGNALED},
                           *bad;

        t_av(&d, &t.ud, &av);
        ah = ibv_create_ah(d.pd, &av);
        REQUIRE(ah, "create_ah");
        wr.wr.ud.ah = ah;
        wr.wr.ud.remote_qpn = t.ud.qpn;
        wr.wr.ud.remote_qkey = 0x1111;
        REQUIRE(ibv_post_send(ud, &wr, &bad) == 0, "post UD");
        t_expect(cq, IBV_WC_SUCCESS, 60, "UD send (always completes)");
        t_counters(&c1);
        CHECK(c1.ud_drops_other == c0.ud_drops_other + 1, "the datagram to a dead QP is dropped");
        CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");
    }
    for (size_t i = 0; i < 16384; i++)
        if (sink[i] != 0) {
            CHECK(false, "READ/atomic sink got byte %#x at %zu", sink[i], i);
            break;
        }

    c = 'c';
    REQUIRE(write(to_r, &c, 1) == 1, "tell R to check");
    waitpid(r, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "R's memory is untouched (status %#x)",
          status);
    close(to_r);
    close(from_r);

    for (int i = 0; i < NQP; i++)
        CHECK(ibv_destroy_qp(rc[i]) == 0, "destroy_qp");
    CHECK(ibv_destroy_qp(ud) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0, "teardown");
    free(buf);
    t_dev_close(&d);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_alarm};

    setvbuf(stdout, NULL, _IOLBF, 0);
    /* pid 1 ignores signals it has no handler for, SIGALRM included */
    sigaction(SIGALRM, &sa, NULL);
    alarm(120);
    if (getpid() != 1) {
        printf("skip: run as pid 1 of a new pid namespace (pid-reuse.sh)\n");
        return 77;
    }
    round_(true);
    round_(false);
    CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
