/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * softib microbenchmark: RC SEND/RECV ping-pong latency (8 B .. 64 KiB)
 * and RDMA WRITE / READ bandwidth (8 B .. 8 MiB) between two processes,
 * next to single-thread memcpy bandwidth measured in the same run; and
 * chained-strided RDMA (8 B .. 64 KiB): CHAIN WRITEs (READs) of `size`
 * bytes each, from consecutive local chunks to remote addresses spaced
 * 2 * size apart, posted as one linked list in one ibv_post_send with only
 * the last signaled (how the ARMCI runtime posts a strided put/get).
 *
 * CSV on stdout, one row per size:
 *   size_bytes,pingpong_lat_us,rdma_write_MBps,rdma_read_MBps,memcpy_MBps,
 *   chain_write_MBps,chain_read_MBps
 * (latency and the chained columns are empty above 64 KiB). A summary line
 * goes to stderr, with the latency of one 8 B RDMA read, fetch-and-add and
 * compare-and-swap at a time (the device's cost of a blocking get or Rmw).
 * Works on any verbs device; built against softib here.
 * SOFTIB_BENCH_MAX_SIZE=N stops every sweep at N bytes (a quick look at 8 B
 * rates); SOFTIB_BENCH_CHAIN=N posts N requests per chain (at most 512), to
 * compare with a runtime that posts shorter chains.
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXSZ  (8u << 20)
#define LATMAX (64u << 10)
#define WINDOW 16
#define CHAIN  512 /* work requests per chained post */

struct addr {
    uint32_t qpn, psn;
    uint16_t lid;
    union ibv_gid gid;
    uint64_t vaddr;
    uint32_t rkey;
};

struct ep {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint8_t *buf; /* [0, MAXSZ): source / receive; [MAXSZ, 2*MAXSZ): sink */
    bool roce;
    int gidx;
    int sends, recvs; /* completions seen but not yet waited for */
    struct addr me, peer;
};

static void die(const char *what)
{
    fprintf(stderr, "softib_bench: %s failed\n", what);
    exit(1);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void xfer(int fd, void *out, const void *in, size_t len)
{
    if (write(fd, in, len) != (ssize_t)len)
        die("write");
    for (size_t got = 0; got < len;) {
        ssize_t n = read(fd, (char *)out + got, len - got);

        if (n <= 0)
            die("read");
        got += (size_t)n;
    }
}

static void sync_peer(int fd)
{
    char a = 's', b;

    xfer(fd, &b, &a, 1);
}

static void ep_up(struct ep *e, int fd)
{
    struct ibv_device **l = ibv_get_device_list(NULL);
    struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = CHAIN + 2 * WINDOW,
                                          .max_recv_wr = 2 * WINDOW,
                                          .max_send_sge = 1,
                                          .max_recv_sge = 1,
                                          .max_inline_data = 64}};
    struct ibv_qp_attr a;
    struct ibv_port_attr pa;

    memset(e, 0, sizeof(*e));
    if (!l || !l[0] || !(e->ctx = ibv_open_device(l[0])))
        die("ibv_open_device");
    ibv_free_device_list(l);
    if (ibv_query_port(e->ctx, 1, &pa))
        die("ibv_query_port");
    e->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
    e->gidx = e->roce ? 1 : 0;
    e->pd = ibv_alloc_pd(e->ctx);
    e->cq = ibv_create_cq(e->ctx, 4 * WINDOW, NULL, NULL, 0);
    /* 2 MiB-aligned and THP-backed where the kernel allows, as RDMA
     * buffers usually are (fewer pages for the kernel to pin per copy) */
    if (posix_memalign((void **)&e->buf, 2u << 20, 2 * (size_t)MAXSZ))
        die("posix_memalign");
    if (!getenv("SOFTIB_BENCH_SMALL_PAGES")) /* set it to measure with 4 KiB pages */
        madvise(e->buf, 2 * (size_t)MAXSZ, MADV_HUGEPAGE);
    memset(e->buf, 1, 2 * (size_t)MAXSZ);
    e->mr = ibv_reg_mr(e->pd, e->buf, 2 * (size_t)MAXSZ,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC);
    qa.send_cq = qa.recv_cq = e->cq;
    e->qp = e->pd && e->cq && e->mr ? ibv_create_qp(e->pd, &qa) : NULL;
    if (!e->qp)
        die("setup");
    memset(&e->me, 0, sizeof(e->me));
    e->me.qpn = e->qp->qp_num;
    e->me.psn = 0x1234;
    e->me.lid = pa.lid;
    ibv_query_gid(e->ctx, 1, e->gidx, &e->me.gid);
    e->me.vaddr = (uintptr_t)e->buf;
    e->me.rkey = e->mr->rkey;
    xfer(fd, &e->peer, &e->me, sizeof(e->me));

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                        IBV_ACCESS_REMOTE_ATOMIC;
    if (ibv_modify_qp(e->qp, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        die("INIT");
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_4096;
    a.dest_qp_num = e->peer.qpn;
    a.rq_psn = e->peer.psn;
    a.max_dest_rd_atomic = 16;
    a.min_rnr_timer = 1;
    a.ah_attr.port_num = 1;
    a.ah_attr.dlid = e->peer.lid;
    if (e->roce) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = e->peer.gid;
        a.ah_attr.grh.sgid_index = (uint8_t)e->gidx;
        a.ah_attr.grh.hop_limit = 1;
    }
    if (ibv_modify_qp(e->qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        die("RTR");
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = e->me.psn;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 16;
    if (ibv_modify_qp(e->qp, &a,
                      IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                          IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
        die("RTS");
}

static void ep_down(struct ep *e)
{
    ibv_destroy_qp(e->qp);
    ibv_dereg_mr(e->mr);
    ibv_destroy_cq(e->cq);
    ibv_dealloc_pd(e->pd);
    ibv_close_device(e->ctx);
    free(e->buf);
}

static void post(struct ep *e, enum ibv_wr_opcode op, uint32_t off, uint32_t len, bool signaled)
{
    struct ibv_sge s = {(uintptr_t)e->buf + off, len, e->mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &s,
                             .num_sge = 1,
                             .opcode = op,
                             .send_flags = signaled ? IBV_SEND_SIGNALED : 0},
                       *bad;

    if (len <= 64 && op == IBV_WR_SEND)
        wr.send_flags |= IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = e->peer.vaddr + MAXSZ;
    wr.wr.rdma.rkey = e->peer.rkey;
    if (ibv_post_send(e->qp, &wr, &bad))
        die("ibv_post_send");
}

/* Receives are always MAXSZ long: one left over from a smaller size must
 * still take the next, larger message. */
static void post_recv(struct ep *e)
{
    struct ibv_sge s = {(uintptr_t)e->buf + MAXSZ, MAXSZ, e->mr->lkey};
    struct ibv_recv_wr wr = {.sg_list = &s, .num_sge = 1}, *bad;

    if (ibv_post_recv(e->qp, &wr, &bad))
        die("ibv_post_recv");
}

/* Busy-poll until `sends` send and `recvs` receive completions arrived;
 * completions beyond those are kept for the next call. */
static void wait_wc(struct ep *e, int sends, int recvs)
{
    struct ibv_wc wc[8];

    while (e->sends < sends || e->recvs < recvs) {
        int k = ibv_poll_cq(e->cq, 8, wc);

        if (k < 0)
            die("ibv_poll_cq");
        for (int i = 0; i < k; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                die(ibv_wc_status_str(wc[i].status));
            if (wc[i].opcode & IBV_WC_RECV)
                e->recvs++;
            else
                e->sends++;
        }
    }
    e->sends -= sends;
    e->recvs -= recvs;
}

/* SOFTIB_BENCH_MAX_SIZE, SOFTIB_BENCH_CHAIN: both processes read them (the peer forks). */
static uint32_t env_u32(const char *name, uint32_t dflt, uint32_t max)
{
    const char *v = getenv(name);
    long n = v && *v ? atol(v) : (long)dflt;

    return n < 1 ? 1 : n > (long)max ? max : (uint32_t)n;
}

static uint32_t max_size(void)
{
    return env_u32("SOFTIB_BENCH_MAX_SIZE", MAXSZ, MAXSZ);
}

static uint32_t lat_max(void)
{
    return max_size() < LATMAX ? max_size() : LATMAX;
}

static int lat_iters(uint32_t size)
{
    return size <= 4096 ? 20000 : 2000;
}

/* The echo side of the ping-pong; then idle (blocked) while we are written. */
static void peer(int fd)
{
    struct ep e;

    ep_up(&e, fd);
    for (uint32_t size = 8; size <= lat_max(); size *= 2) {
        int n = lat_iters(size);

        post_recv(&e);
        sync_peer(fd);
        for (int i = 0; i < n; i++) {
            wait_wc(&e, 0, 1);
            post_recv(&e);
            post(&e, IBV_WR_SEND, 0, size, true);
            wait_wc(&e, 1, 0);
        }
        sync_peer(fd);
    }
    sync_peer(fd); /* bandwidth runs while we sit in read() */
    ep_down(&e);
}

static double pingpong(struct ep *e, int fd, uint32_t size)
{
    int n = lat_iters(size);
    double t0;

    post_recv(e);
    sync_peer(fd);
    t0 = now();
    for (int i = 0; i < n; i++) {
        post(e, IBV_WR_SEND, 0, size, true);
        wait_wc(e, 1, 1); /* our send, and the echo */
        post_recv(e);
    }
    t0 = now() - t0;
    sync_peer(fd);
    return t0 / (2.0 * n) * 1e6; /* one-way: half a round trip */
}

static uint64_t bw_iters(uint32_t size)
{
    uint64_t n = (512ull << 20) / size;

    return n < 64 ? 64 : n > 200000 ? 200000 : n;
}

/* Up to WINDOW operations in flight; every HALF-th is signaled, and its
 * completion (they arrive in order) accounts for its whole batch. */
#define HALF (WINDOW / 2)

static double rdma_bw(struct ep *e, enum ibv_wr_opcode op, uint32_t size)
{
    uint64_t n = bw_iters(size), posted = 0, done = 0;
    double t0 = now();

    while (done < n) {
        while (posted < n && posted - done < WINDOW) {
            post(e, op, op == IBV_WR_RDMA_READ ? MAXSZ : 0, size,
                 (posted + 1) % HALF == 0 || posted + 1 == n);
            posted++;
        }
        wait_wc(e, 1, 0);
        done = (done / HALF + 1) * HALF < n ? (done / HALF + 1) * HALF : n;
    }
    return (double)size * (double)n / (now() - t0) / 1e6;
}

/* Chained strided transfers: one ibv_post_send of CHAIN linked WRs (only
 * the last signaled), then wait for that completion; repeated. Remote
 * chunks are 2 * size apart (wrapping inside the peer's sink half). */
static double chain_bw(struct ep *e, enum ibv_wr_opcode op, uint32_t size)
{
    static struct ibv_sge s[CHAIN];
    static struct ibv_send_wr wr[CHAIN];
    uint32_t chain = env_u32("SOFTIB_BENCH_CHAIN", CHAIN, CHAIN);
    uint64_t rounds = bw_iters(size) / chain, i;
    uint32_t loc = op == IBV_WR_RDMA_READ ? MAXSZ : 0;
    struct ibv_send_wr *bad;
    double t0;

    if (rounds < 8)
        rounds = 8;
    for (i = 0; i < chain; i++) {
        uint64_t roff = (i * 2 * (uint64_t)size) % MAXSZ;

        s[i].addr = (uintptr_t)e->buf + loc + (i * size) % MAXSZ;
        s[i].length = size;
        s[i].lkey = e->mr->lkey;
        memset(&wr[i], 0, sizeof(wr[i]));
        wr[i].wr_id = i;
        wr[i].sg_list = &s[i];
        wr[i].num_sge = 1;
        wr[i].opcode = op;
        wr[i].send_flags = i + 1 == chain ? IBV_SEND_SIGNALED : 0;
        wr[i].wr.rdma.remote_addr = e->peer.vaddr + MAXSZ + roff;
        wr[i].wr.rdma.rkey = e->peer.rkey;
        wr[i].next = i + 1 == chain ? NULL : &wr[i + 1];
    }
    t0 = now();
    for (i = 0; i < rounds; i++) {
        if (ibv_post_send(e->qp, wr, &bad))
            die("ibv_post_send (chain)");
        wait_wc(e, 1, 0);
    }
    return (double)size * chain * (double)rounds / (now() - t0) / 1e6;
}

/* One 8 B RDMA read, fetch-and-add or compare-and-swap at a time, each waited for: microseconds
 * per operation (what a blocking get or ARMCI_Rmw costs the device). */
static double one_at_a_time_us(struct ep *e, enum ibv_wr_opcode op)
{
    int n = lat_iters(8);
    struct ibv_sge s = {(uintptr_t)e->buf + MAXSZ, 8, e->mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &s,
                             .num_sge = 1,
                             .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED},
                       *bad;
    double t0 = now();

    for (int i = 0; i < n; i++) {
        if (op == IBV_WR_RDMA_READ) {
            wr.wr.rdma.remote_addr = e->peer.vaddr + MAXSZ;
            wr.wr.rdma.rkey = e->peer.rkey;
        } else {
            wr.wr.atomic.remote_addr = e->peer.vaddr + MAXSZ;
            wr.wr.atomic.rkey = e->peer.rkey;
            wr.wr.atomic.compare_add = 1;
            wr.wr.atomic.swap = 1;
        }
        if (ibv_post_send(e->qp, &wr, &bad))
            die("ibv_post_send (one at a time)");
        wait_wc(e, 1, 0);
    }
    return (now() - t0) / n * 1e6;
}

static double memcpy_bw(uint8_t *dst, const uint8_t *src, uint32_t size)
{
    uint64_t n = bw_iters(size);
    double t0 = now();

    for (uint64_t i = 0; i < n; i++) {
        memcpy(dst, src, size);
        __asm__ volatile("" ::"r"(dst) : "memory"); /* keep every copy */
    }
    return (double)size * (double)n / (now() - t0) / 1e6;
}

int main(void)
{
    double lat[32] = {0}, w1m = 0, m1m = 0, c4k = 0;
    struct ep e;
    int sv[2], status;
    pid_t pid;
    int k = 0;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        die("socketpair");
    pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(sv[0]);
        peer(sv[1]);
        _exit(0);
    }
    close(sv[1]);
    ep_up(&e, sv[0]);
    for (uint32_t size = 8; size <= lat_max(); size *= 2)
        lat[k++] = pingpong(&e, sv[0], size);
    printf("size_bytes,pingpong_lat_us,rdma_write_MBps,rdma_read_MBps,memcpy_MBps,"
           "chain_write_MBps,chain_read_MBps\n");
    k = 0;
    for (uint32_t size = 8; size <= max_size(); size *= 2, k++) {
        double w = rdma_bw(&e, IBV_WR_RDMA_WRITE, size);
        double r = rdma_bw(&e, IBV_WR_RDMA_READ, size);
        double m = memcpy_bw(e.buf + MAXSZ, e.buf, size);

        if (size <= LATMAX) {
            double cw = chain_bw(&e, IBV_WR_RDMA_WRITE, size);
            double cr = chain_bw(&e, IBV_WR_RDMA_READ, size);

            printf("%u,%.2f,%.1f,%.1f,%.1f,%.1f,%.1f\n", size, lat[k], w, r, m, cw, cr);
            if (size == 4096)
                c4k = cw;
        } else {
            printf("%u,,%.1f,%.1f,%.1f,,\n", size, w, r, m);
        }
        if (size == 1u << 20) {
            w1m = w;
            m1m = m;
        }
    }
    fflush(stdout);
    double rd = one_at_a_time_us(&e, IBV_WR_RDMA_READ);
    double fa = one_at_a_time_us(&e, IBV_WR_ATOMIC_FETCH_AND_ADD);
    double cs = one_at_a_time_us(&e, IBV_WR_ATOMIC_CMP_AND_SWP);
    sync_peer(sv[0]);
    waitpid(pid, &status, 0);
    ep_down(&e);
    fprintf(stderr,
            "softib_bench: 8 B latency %.2f us; 1 MiB RDMA write %.0f MB/s = %.2f x memcpy "
            "(%.0f MB/s); 4 KiB chained-strided write %.0f MB/s; one at a time: 8 B RDMA read "
            "%.2f us, atomic fetch-and-add %.2f us, compare-and-swap %.2f us\n",
            lat[0], w1m, m1m > 0 ? w1m / m1m : 0, m1m, c4k, rd, fa, cs);
    return 0;
}
