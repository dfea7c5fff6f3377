/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Chains of RDMA WRITEs and READs posted as one linked list in a single
 * ibv_post_send (as the runtime posts a strided transfer), into a target
 * blocked in sleep() the whole time. softib executes such a chain in
 * batches (one process_vm_writev/readv for many WQEs); the verbs-level
 * result must be exactly that of executing them one by one:
 *
 *   - 150 WRITEs of odd sizes (0 B .. 8 KiB) at odd offsets with gaps, some
 *     with two SGEs, some inline, all signaled: completions in order;
 *   - 150 READs of them back, a few signaled: only those complete, in order;
 *   - WRITE, READ, WRITE, READ runs of 25 over the same remote chunks in one
 *     chain: each READ run sees the WRITE run before it;
 *   - a WRITE chain with a bad rkey in the middle and a READ chain with an
 *     out-of-range address in the middle: the WQEs before it succeed (their
 *     bytes land), it fails with IBV_WC_REM_ACCESS_ERR, the rest are flushed;
 *   - softib only (it pins nothing): WRITE and READ chains into an MR whose
 *     third page the target unmapped after registering it. The transfer
 *     faults inside WQE 13; the WQEs before it succeed, WQE 13 fails with
 *     IBV_WC_REM_ACCESS_ERR, the rest are flushed and write nothing;
 *   - a WRITE chain to a peer SIGKILLed just before: the first WQE is
 *     retransmitted retry_cnt times and fails, the rest are flushed.
 *
 * Every byte is checked on both sides (gaps included), in the initiator's
 * buffers and in the target's memory once it wakes. The whole set runs
 * twice from two initiator processes, the second with the wire model
 * (SOFTIB_WIRE_LATENCY_US/SOFTIB_WIRE_MBPS: WQEs become ready at staggered
 * times, so batches form at odd boundaries while polling; ignored by
 * rdma-core).
 */
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIB    1024u
#define NW     150 /* WRITE chain, READ chain */
#define NM     25  /* each run of the mixed chain */
#define NB     120 /* chains with a bad WQE */
#define BADW   57  /* the WRITE with a bad rkey */
#define BADR   33  /* the READ outside the MR */
#define NH     30  /* chains into the MR with a hole */
#define BADH   13  /* the first WQE reaching the hole */
#define NRUN   2   /* initiator processes: plain, wire model */
#define NQP    5   /* per initiator: good chains, bad WRITE, bad READ, holey WRITE, holey READ */
#define AREA   (1024 * KIB) /* target bytes per initiator */
#define TBUF   (NRUN * AREA)
#define LREG   (1024 * KIB) /* initiator: one region per pattern */
#define LBUF   (5 * LREG)
#define PAGE   4096u
#define HPAGES 4 /* per initiator; the third is unmapped */
#define QDEPTH 256
#define TBG    0x5a /* the target's untouched bytes */
#define LBG    0xee /* the initiator's untouched sinks */

/* target offsets inside an initiator's area */
#define R_A 0           /* WRITE chain (READ back by the READ chains) */
#define R_C (400 * KIB) /* mixed chain */
#define R_D (512 * KIB) /* WRITE chain with a bad rkey */

/* source patterns: regions of src */
enum { P_A, P_C1, P_C2, P_D, P_H };
/* READ sinks: regions of dst */
enum { S_B, S_C1, S_C2, S_E, S_H };

struct chunk {
    uint64_t loff; /* in a region of the initiator's buffer */
    uint64_t roff; /* in the target's area */
    uint32_t len;
};

/* Odd sizes, every 50th empty (zero-length RDMA). */
static uint32_t csize(unsigned i)
{
    static const uint32_t s[] = {1, 3, 64, 100, 511, 4095, 4096, 4097, 700, 13, 2, 8191};

    return i % 50 == 49 ? 0 : s[i % 12] + i % 7;
}

/* n chunks from roff on, at odd offsets, with gaps on both sides. */
static void layout(struct chunk *c, unsigned n, uint64_t roff)
{
    uint64_t l = 3, r = roff + 1;

    for (unsigned i = 0; i < n; i++) {
        c[i].len = csize(i);
        c[i].loff = l;
        c[i].roff = r;
        l += c[i].len + 2 + i % 3;
        r += c[i].len + 5 + i % 11;
    }
}

/* Chunk k of the holey chains: 500 bytes every 600 from the start of the
 * initiator's pages; chunk 13 crosses into the unmapped third page. */
static void hole_layout(struct chunk *c)
{
    for (unsigned k = 0; k < NH; k++) {
        c[k].loff = 3 + 600 * (uint64_t)k;
        c[k].roff = 600 * (uint64_t)k;
        c[k].len = 500;
    }
}

static void fill_src(uint8_t *src)
{
    for (unsigned p = 0; p < LBUF / LREG; p++)
        t_fill(src + (size_t)p * LREG, LREG, 40 + p);
}

/* ---- target ---- */

struct target_info {
    struct t_addr qp[NRUN * NQP];
    pid_t pid;
    uint64_t hole_addr; /* NRUN * HPAGES pages, third of each unmapped */
    uint32_t hole_rkey;
};

/* The holey pages of the target after both runs (softib): chunks before
 * BADH written, the rest of the mapped pages untouched, except the start of
 * chunk BADH, which the faulting transfer may have written. */
static size_t hole_check(const uint8_t *pages, const uint8_t *src)
{
    static uint8_t exp[2 * PAGE];
    struct chunk c[NH];
    size_t bad = 0;

    hole_layout(c);
    for (unsigned r = 0; r < NRUN; r++) {
        const uint8_t *p = pages + (size_t)r * HPAGES * PAGE;

        memset(exp, TBG, sizeof(exp));
        for (unsigned k = 0; k < BADH; k++)
            memcpy(exp + c[k].roff, src + P_H * LREG + c[k].loff, c[k].len);
        memcpy(exp + c[BADH].roff, p + c[BADH].roff, 2 * PAGE - c[BADH].roff);
        for (size_t i = 0; i < 2 * PAGE; i++)
            bad += p[i] != exp[i];
        for (size_t i = 3 * PAGE; i < 4 * PAGE; i++)
            bad += p[i] != TBG;
    }
    return bad;
}

/* What the target's memory must hold: the chains applied in order. */
static void target_expect(uint8_t *exp, const uint8_t *src, const uint8_t *actual)
{
    struct chunk a[NW], c[NM], d[NB];

    layout(a, NW, R_A);
    layout(c, NM, R_C);
    layout(d, NB, R_D);
    memset(exp, TBG, TBUF);
    for (unsigned r = 0; r < NRUN; r++) {
        uint8_t *area = exp + (size_t)r * AREA;

        for (unsigned i = 0; i < NW; i++)
            memcpy(area + a[i].roff, src + P_A * LREG + a[i].loff, a[i].len);
        for (unsigned i = 0; i < NM; i++)
            memcpy(area + c[i].roff, src + P_C2 * LREG + c[i].loff, c[i].len);
        for (unsigned i = 0; i < NB; i++) {
            if (i < BADW)
                memcpy(area + d[i].roff, src + P_D * LREG + d[i].loff, d[i].len);
            else if (!t_softib()) /* rxe: what follows a NAK may have landed or not */
                memcpy(area + d[i].roff, actual + (size_t)r * AREA + d[i].roff, d[i].len);
        }
    }
}

static void target(int fd, void *arg)
{
    uint8_t *buf = t_alloc(TBUF), *exp = t_alloc(TBUF), *src = t_alloc(LBUF), *hole;
    struct t_addr peer[NRUN * NQP];
    struct target_info me;
    struct ibv_qp *qp[NRUN * NQP];
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_mr *mr, *hmr;
    size_t bad = 0, first = 0, hbad = 0;
    int ok;
    (void)arg;

    t_catch_usr1();
    memset(buf, TBG, TBUF);
    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
    mr = ibv_reg_mr(d.pd, buf, TBUF, T_ACCESS_ALL);
    hole = mmap(NULL, NRUN * HPAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                0);
    REQUIRE(hole != MAP_FAILED, "mmap");
    memset(hole, TBG, NRUN * HPAGES * PAGE);
    hmr = ibv_reg_mr(d.pd, hole, NRUN * HPAGES * PAGE, T_ACCESS_ALL);
    REQUIRE(cq && mr && hmr, "target setup");
    for (unsigned r = 0; r < NRUN; r++) /* registered, then unmapped: softib pins nothing */
        REQUIRE(munmap(hole + ((size_t)r * HPAGES + 2) * PAGE, PAGE) == 0, "munmap");
    me.hole_addr = (uintptr_t)hole;
    me.hole_rkey = hmr->rkey;
    for (int i = 0; i < NRUN * NQP; i++) {
        qp[i] = t_qp(&d, cq, IBV_QPT_RC, 16, NULL);
        t_addr_of(&d, qp[i], &me.qp[i]);
        me.qp[i].addr = (uintptr_t)buf + (uint64_t)(i / NQP) * AREA;
        me.qp[i].rkey = mr->rkey;
        me.qp[i].len = AREA;
    }
    me.pid = getpid();
    t_send(fd, &me, sizeof(me));
    t_recv(fd, peer, sizeof(peer));
    for (int i = 0; i < NRUN * NQP; i++)
        REQUIRE(t_rc_connect(&d, qp[i], &peer[i], T_ACCESS_ALL) == 0, "target connect %d", i);
    t_sync(fd);
    sleep(3600); /* the initiators write and read our memory meanwhile */

    fill_src(src);
    target_expect(exp, src, buf);
    for (size_t i = 0; i < TBUF; i++) {
        if (buf[i] != exp[i] && !bad++)
            first = i;
    }
    CHECK(bad == 0, "target memory: %zu wrong bytes, first at area %zu offset %zu", bad,
          first / AREA, first % AREA);
    if (t_softib()) {
        hbad = hole_check(hole, src);
        CHECK(hbad == 0, "target memory around the hole: %zu wrong bytes", hbad);
    }
    ok = bad == 0 && hbad == 0;
    t_send(fd, &ok, sizeof(ok));
    for (int i = 0; i < NRUN * NQP; i++)
        CHECK(ibv_destroy_qp(qp[i]) == 0, "target destroy qp");
    CHECK(ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0 && ibv_dereg_mr(hmr) == 0,
          "target teardown");
    for (unsigned r = 0; r < NRUN; r++) {
        munmap(hole + (size_t)r * HPAGES * PAGE, 2 * PAGE);
        munmap(hole + ((size_t)r * HPAGES + 3) * PAGE, PAGE);
    }
    free(buf);
    free(exp);
    free(src);
    t_dev_close(&d);
}

/* ---- initiator ---- */

struct ini {
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp[NQP];
    struct ibv_mr *ms, *md;
    uint8_t *src, *dst;
    struct t_addr t; /* the target's first QP of our run: our area and the rkey */
    uint64_t mr_end; /* the end of the target's MR */
    uint64_t hole;   /* our pages of the target's holey MR */
    uint32_t hole_rkey;
    pid_t tpid;
    struct ibv_send_wr wr[4 * NM > NW ? 4 * NM : NW];
    struct ibv_sge sge[4 * NM > NW ? 4 * NM : NW][2];
};

/* WR k of the chain: chunk c between region `lreg` of src (WRITE) or dst
 * (READ) and the target; split in two SGEs or inline as asked. */
static void chain_wr(struct ini *in, unsigned k, enum ibv_wr_opcode op, const struct chunk *c,
                     unsigned lreg, bool split, bool inl, bool signaled, uint64_t wr_id)
{
    struct ibv_send_wr *w = &in->wr[k];
    struct ibv_sge *s = in->sge[k];
    bool rd = op == IBV_WR_RDMA_READ;
    uint8_t *l = (rd ? in->dst : in->src) + (size_t)lreg * LREG + c->loff;
    uint32_t lkey = rd ? in->md->lkey : in->ms->lkey;

    memset(w, 0, sizeof(*w));
    w->wr_id = wr_id;
    w->opcode = op;
    w->sg_list = s;
    w->send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (inl && !rd ? IBV_SEND_INLINE : 0);
    w->wr.rdma.remote_addr = in->t.addr + c->roff;
    w->wr.rdma.rkey = in->t.rkey;
    s[0].addr = (uintptr_t)l;
    s[0].length = c->len;
    s[0].lkey = lkey;
    w->num_sge = c->len ? 1 : 0;
    if (split && c->len >= 2) {
        s[0].length = c->len / 2;
        s[1].addr = (uintptr_t)l + c->len / 2;
        s[1].length = c->len - c->len / 2;
        s[1].lkey = lkey;
        w->num_sge = 2;
    }
    if (k)
        in->wr[k - 1].next = w;
}

static int post_chain(struct ini *in, int q, unsigned n, struct ibv_send_wr **bad)
{
    in->wr[n - 1].next = NULL;
    *bad = NULL;
    return ibv_post_send(in->qp[q], in->wr, bad);
}

/* Poll until the expected completions arrived; they must come in this
 * order with these wr_ids, statuses and (successful ones) opcodes. */
static bool expect_seq(struct ini *in, unsigned n, const uint64_t *ids,
                       const enum ibv_wc_status *st, const enum ibv_wc_opcode *op, const char *what)
{
    unsigned wrong = 0;

    for (unsigned i = 0; i < n; i++) {
        struct ibv_wc wc;

        if (!t_poll(in->cq, &wc)) {
            CHECK(false, "%s: completion %u of %u missing", what, i, n);
            return false;
        }
        if (wc.wr_id != ids[i] || wc.status != st[i] ||
            (st[i] == IBV_WC_SUCCESS && wc.opcode != op[i])) {
            if (!wrong++)
                fprintf(stderr,
                        "%s: completion %u: wr_id %llu status %s opcode %d, expected wr_id %llu "
                        "status %s opcode %d\n",
                        what, i, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
                        wc.opcode, (unsigned long long)ids[i], ibv_wc_status_str(st[i]), op[i]);
        }
    }
    CHECK(wrong == 0, "%s: %u completions in order (%u wrong)", what, n, wrong);
    CHECK(t_quiet(in->cq, 0.01), "%s: no completion beyond those", what);
    return wrong == 0;
}

/* Region `reg` of dst holds exactly the READ chunks (from pattern region
 * `pat`) of c[0..n), and LBG everywhere else. */
static bool sink_ok(const struct ini *in, unsigned reg, unsigned pat, const struct chunk *c,
                    unsigned n)
{
    static uint8_t exp[LREG];
    const uint8_t *got = in->dst + (size_t)reg * LREG;

    memset(exp, LBG, LREG);
    for (unsigned i = 0; i < n; i++)
        memcpy(exp + c[i].loff, in->src + (size_t)pat * LREG + c[i].loff, c[i].len);
    return memcmp(exp, got, LREG) == 0;
}

static void good_chains(struct ini *in)
{
    static uint64_t ids[4 * NM > NW ? 4 * NM : NW];
    static enum ibv_wc_status st[4 * NM > NW ? 4 * NM : NW];
    static enum ibv_wc_opcode op[4 * NM > NW ? 4 * NM : NW];
    struct chunk a[NW], c[NM];
    struct ibv_send_wr *bad;
    unsigned n = 0, k;

    layout(a, NW, R_A);
    layout(c, NM, R_C);

    /* WRITEs, all signaled; some split, some inline */
    for (unsigned i = 0; i < NW; i++) {
        chain_wr(in, i, IBV_WR_RDMA_WRITE, &a[i], P_A, i % 4 == 1, i % 4 == 3 && a[i].len <= 64,
                 true, 1000 + i);
        ids[i] = 1000 + i;
        st[i] = IBV_WC_SUCCESS;
        op[i] = IBV_WC_RDMA_WRITE;
    }
    CHECK(post_chain(in, 0, NW, &bad) == 0 && !bad, "post a chain of %d RDMA WRITEs", NW);
    expect_seq(in, NW, ids, st, op, "WRITE chain");

    /* READs of the same chunks, every 7th (and the last) signaled */
    for (unsigned i = 0; i < NW; i++) {
        bool sig = i % 7 == 0 || i == NW - 1;

        chain_wr(in, i, IBV_WR_RDMA_READ, &a[i], S_B, i % 5 == 2, false, sig, 2000 + i);
        if (sig) {
            ids[n] = 2000 + i;
            st[n] = IBV_WC_SUCCESS;
            op[n++] = IBV_WC_RDMA_READ;
        }
    }
    CHECK(post_chain(in, 0, NW, &bad) == 0 && !bad, "post a chain of %d RDMA READs", NW);
    expect_seq(in, n, ids, st, op, "READ chain (partly signaled)");
    CHECK(sink_ok(in, S_B, P_A, a, NW), "READ chain: every byte read back, gaps untouched");

    /* WRITE, READ, WRITE, READ over the same chunks in one chain */
    for (k = 0; k < 4 * NM; k++) {
        unsigned run = k / NM, i = k % NM;
        bool rd = run % 2 == 1;
        enum ibv_wr_opcode o = rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
        unsigned lreg = rd ? (run == 1 ? S_C1 : S_C2) : (run == 0 ? P_C1 : P_C2);

        chain_wr(in, k, o, &c[i], lreg, i % 3 == 0, !rd && i % 6 == 1 && c[i].len <= 64, true,
                 3000 + k);
        ids[k] = 3000 + k;
        st[k] = IBV_WC_SUCCESS;
        op[k] = rd ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
    }
    CHECK(post_chain(in, 0, 4 * NM, &bad) == 0 && !bad, "post a WRITE/READ/WRITE/READ chain");
    expect_seq(in, 4 * NM, ids, st, op, "mixed chain");
    CHECK(sink_ok(in, S_C1, P_C1, c, NM), "mixed chain: the first READs see the first WRITEs");
    CHECK(sink_ok(in, S_C2, P_C2, c, NM), "mixed chain: the second READs see the second WRITEs");
}

/* A chain of NB with WQE `badi` bad: before it success, it REM_ACCESS_ERR,
 * after it flushed; both QPs end in ERR. */
static void bad_chain(struct ini *in, bool rd)
{
    static uint64_t ids[NB];
    static enum ibv_wc_status st[NB];
    static enum ibv_wc_opcode op[NB];
    unsigned badi = rd ? BADR : BADW;
    int q = rd ? 2 : 1;
    struct chunk a[NB];
    struct ibv_send_wr *bad;

    layout(a, NB, rd ? R_A : R_D);
    for (unsigned i = 0; i < NB; i++) {
        chain_wr(in, i, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, &a[i], rd ? S_E : P_D,
                 i % 4 == 2, !rd && i % 9 == 4 && a[i].len <= 64, true, 5000 + i);
        ids[i] = 5000 + i;
        st[i] = i < badi ? IBV_WC_SUCCESS : i == badi ? IBV_WC_REM_ACCESS_ERR : IBV_WC_WR_FLUSH_ERR;
        op[i] = rd ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
    }
    if (rd) /* past the end of the target's MR */
        in->wr[badi].wr.rdma.remote_addr = in->mr_end - 7;
    else
        in->wr[badi].wr.rdma.rkey ^= 0x5500;
    CHECK(in->wr[badi].num_sge, "the bad WQE carries data");
    CHECK(post_chain(in, q, NB, &bad) == 0 && !bad, "post a chain with one bad %s",
          rd ? "READ" : "WRITE");
    expect_seq(in, NB, ids, st, op,
               rd ? "READ chain with an out-of-range address" : "WRITE chain with a bad rkey");
    CHECK(t_query(in->qp[q]).qp_state == IBV_QPS_ERR, "the QP is in ERR after the bad chain");
    if (rd)
        CHECK(sink_ok(in, S_E, P_A, a, badi), "the READs before the bad one delivered their bytes");
}

/* softib: chains into pages the target unmapped after registering them.
 * The transfer faults inside WQE BADH: the WQEs before it complete, it
 * fails with REM_ACCESS_ERR (as alone), the rest are flushed. */
static void hole_chain(struct ini *in, bool rd)
{
    static uint64_t ids[NH];
    static enum ibv_wc_status st[NH];
    static enum ibv_wc_opcode op[NH];
    int q = rd ? 4 : 3;
    struct chunk c[NH];
    struct ibv_send_wr *bad;

    hole_layout(c);
    for (unsigned k = 0; k < NH; k++) {
        chain_wr(in, k, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, &c[k], rd ? S_H : P_H,
                 k % 3 == 1, false, true, 7000 + k);
        in->wr[k].wr.rdma.remote_addr = in->hole + c[k].roff;
        in->wr[k].wr.rdma.rkey = in->hole_rkey;
        ids[k] = 7000 + k;
        st[k] = k < BADH ? IBV_WC_SUCCESS : k == BADH ? IBV_WC_REM_ACCESS_ERR : IBV_WC_WR_FLUSH_ERR;
        op[k] = rd ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
    }
    CHECK(post_chain(in, q, NH, &bad) == 0 && !bad, "post a chain running into unmapped memory");
    expect_seq(in, NH, ids, st, op,
               rd ? "READ chain into an unmapped page" : "WRITE chain into an unmapped page");
    if (rd) {
        /* WQE BADH may have read part of its chunk before the fault */
        uint8_t *sink = in->dst + S_H * LREG;
        static uint8_t keep[500];

        memcpy(keep, sink + c[BADH].loff, c[BADH].len);
        memset(sink + c[BADH].loff, LBG, c[BADH].len);
        CHECK(sink_ok(in, S_H, P_H, c, BADH), "the READs before the fault delivered their bytes");
        memcpy(sink + c[BADH].loff, keep, c[BADH].len);
    }
}

static void initiator(int fd, void *arg)
{
    int run = *(int *)arg;
    struct target_info ti;
    struct t_addr me[NQP];
    struct softib_counters c0, c1;
    struct ini *in = calloc(1, sizeof(*in));
    struct chunk a[NW], c[NM], d[NB];
    uint64_t wbytes = 0, rbytes = 0;
    bool cnt;

    REQUIRE(in, "calloc");
    if (run == 1) { /* before the device is opened: read with the other knobs */
        setenv("SOFTIB_WIRE_LATENCY_US", "20", 1);
        setenv("SOFTIB_WIRE_MBPS", "20000", 1);
    }
    in->src = t_alloc(LBUF);
    in->dst = t_alloc(LBUF);
    fill_src(in->src);
    memset(in->dst, LBG, LBUF);
    t_dev_open(&in->d);
    in->cq = ibv_create_cq(in->d.ctx, 1024, NULL, NULL, 0);
    in->ms = ibv_reg_mr(in->d.pd, in->src, LBUF, IBV_ACCESS_LOCAL_WRITE);
    in->md = ibv_reg_mr(in->d.pd, in->dst, LBUF, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(in->cq && in->ms && in->md, "initiator setup");
    cnt = t_softib() && t_counters(&c0) == 0;
    t_recv(fd, &ti, sizeof(ti));
    in->t = ti.qp[run * NQP];
    in->mr_end = ti.qp[0].addr + TBUF;
    in->hole = ti.hole_addr + (uint64_t)run * HPAGES * PAGE;
    in->hole_rkey = ti.hole_rkey;
    in->tpid = ti.pid;
    for (int q = 0; q < NQP; q++) {
        in->qp[q] = t_qp(&in->d, in->cq, IBV_QPT_RC, QDEPTH, NULL);
        t_addr_of(&in->d, in->qp[q], &me[q]);
        REQUIRE(t_rc_connect(&in->d, in->qp[q], &ti.qp[run * NQP + q], IBV_ACCESS_LOCAL_WRITE) == 0,
                "initiator connect");
    }
    t_send(fd, me, sizeof(me));
    t_sync(fd); /* the target is connected and asleep */

    good_chains(in);
    CHECK(t_in_sleep(in->tpid), "the target is still blocked in sleep()");
    bad_chain(in, false);
    bad_chain(in, true);
    if (t_softib()) {
        hole_chain(in, false);
        hole_chain(in, true);
    }
    CHECK(t_in_sleep(in->tpid), "the target slept throughout");

    if (cnt && t_counters(&c1) == 0) {
        layout(a, NW, R_A);
        layout(c, NM, R_C);
        layout(d, NB, R_D);
        for (unsigned i = 0; i < NW; i++)
            wbytes += a[i].len;
        rbytes = wbytes;
        for (unsigned i = 0; i < NM; i++) {
            wbytes += 2 * (uint64_t)c[i].len;
            rbytes += 2 * (uint64_t)c[i].len;
        }
        for (unsigned i = 0; i < BADW; i++)
            wbytes += d[i].len;
        for (unsigned i = 0; i < BADR; i++)
            rbytes += a[i].len; /* the READ chain reads the WRITE chain's chunks */
        wbytes += BADH * 500;
        rbytes += BADH * 500;
        CHECK(c1.rdma_writes - c0.rdma_writes == NW + 2 * NM + BADW + BADH &&
                  c1.rdma_write_bytes - c0.rdma_write_bytes == wbytes,
              "counters: %llu RDMA WRITEs of %llu bytes, expected %d of %llu",
              (unsigned long long)(c1.rdma_writes - c0.rdma_writes),
              (unsigned long long)(c1.rdma_write_bytes - c0.rdma_write_bytes),
              NW + 2 * NM + BADW + BADH, (unsigned long long)wbytes);
        CHECK(c1.rdma_reads - c0.rdma_reads == NW + 2 * NM + BADR + BADH &&
                  c1.rdma_read_bytes - c0.rdma_read_bytes == rbytes,
              "counters: %llu RDMA READs of %llu bytes, expected %d of %llu",
              (unsigned long long)(c1.rdma_reads - c0.rdma_reads),
              (unsigned long long)(c1.rdma_read_bytes - c0.rdma_read_bytes),
              NW + 2 * NM + BADR + BADH, (unsigned long long)rbytes);
        CHECK(c1.wc_errors - c0.wc_errors == 4 &&
                  c1.wc_flushed - c0.wc_flushed == 2 * NB - BADW - BADR - 2 + 2 * (NH - BADH - 1),
              "counters: %llu error and %llu flush completions",
              (unsigned long long)(c1.wc_errors - c0.wc_errors),
              (unsigned long long)(c1.wc_flushed - c0.wc_flushed));
    }
    for (int q = 0; q < NQP; q++)
        CHECK(ibv_destroy_qp(in->qp[q]) == 0, "initiator destroy qp");
    CHECK(ibv_destroy_cq(in->cq) == 0 && ibv_dereg_mr(in->ms) == 0 && ibv_dereg_mr(in->md) == 0,
          "initiator teardown");
    free(in->src);
    free(in->dst);
    t_dev_close(&in->d);
    free(in);
}

/* ---- a dead peer ---- */

static void victim(int fd, void *arg)
{
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *buf = t_alloc(64 * KIB);
    struct ibv_mr *mr;
    struct t_addr me, peer;
    (void)arg;

    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    qp = t_qp(&d, cq, IBV_QPT_RC, 16, NULL);
    mr = ibv_reg_mr(d.pd, buf, 64 * KIB, T_ACCESS_ALL);
    REQUIRE(cq && mr, "victim setup");
    t_addr_of(&d, qp, &me);
    me.addr = (uintptr_t)buf;
    me.rkey = mr->rkey;
    t_send(fd, &me, sizeof(me));
    t_recv(fd, &peer, sizeof(peer));
    REQUIRE(t_rc_connect(&d, qp, &peer, T_ACCESS_ALL) == 0, "victim connect");
    t_sync(fd);
    for (;;)
        pause(); /* until SIGKILL */
}

/* A chain of WRITEs to a process killed after connecting (not yet reaped,
 * so its QP and MR are still on the fabric): the head WQE is retransmitted
 * retry_cnt times, then fails; everything after it is flushed. */
static void dead_peer(void)
{
    enum { N = 40, RETRY = 3 };
    struct t_child v = t_spawn(victim, NULL);
    struct softib_counters c0, c1;
    struct ibv_send_wr wr[N], *bad;
    struct ibv_sge sge[N];
    struct t_addr peer, me;
    struct ibv_wc wc;
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *buf = t_alloc(64 * KIB);
    struct ibv_mr *mr;
    siginfo_t si;
    bool cnt, order = true;
    int status;

    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 2 * N, NULL, NULL, 0);
    qp = t_qp(&d, cq, IBV_QPT_RC, 64, NULL);
    mr = ibv_reg_mr(d.pd, buf, 64 * KIB, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(cq && mr, "dead-peer setup");
    t_recv(v.fd, &peer, sizeof(peer));
    t_addr_of(&d, qp, &me);
    t_send(v.fd, &me, sizeof(me));
    /* a short ACK timeout (131 us), RETRY retransmissions */
    REQUIRE(t_rc_init(qp, IBV_ACCESS_LOCAL_WRITE) == 0 && t_rc_rtr(&d, qp, &peer, 12) == 0 &&
                t_rc_rts(qp, me.psn, 5, RETRY, 7) == 0,
            "dead-peer connect");
    t_sync(v.fd);
    kill(v.pid, SIGKILL);
    memset(&si, 0, sizeof(si)); /* dead, but left a zombie: nothing reclaims it yet */
    CHECK(waitid(P_PID, (id_t)v.pid, &si, WEXITED | WNOWAIT) == 0 && si.si_code == CLD_KILLED,
          "the victim is dead");
    cnt = t_softib() && t_counters(&c0) == 0;
    for (int i = 0; i < N; i++) {
        sge[i].addr = (uintptr_t)buf + 1000 * (uint64_t)i;
        sge[i].length = 700;
        sge[i].lkey = mr->lkey;
        memset(&wr[i], 0, sizeof(wr[i]));
        wr[i].wr_id = 9000 + (uint64_t)i;
        wr[i].sg_list = &sge[i];
        wr[i].num_sge = 1;
        wr[i].opcode = IBV_WR_RDMA_WRITE;
        wr[i].send_flags = i % 2 ? IBV_SEND_SIGNALED : 0;
        wr[i].wr.rdma.remote_addr = peer.addr + 1200 * (uint64_t)i;
        wr[i].wr.rdma.rkey = peer.rkey;
        wr[i].next = i + 1 < N ? &wr[i + 1] : NULL;
    }
    CHECK(ibv_post_send(qp, wr, &bad) == 0, "post a WRITE chain to a dead peer");
    /* softib: the packets go nowhere; rxe may NAK from the dying QP instead */
    REQUIRE(t_poll(cq, &wc), "a completion for the chain to the dead peer");
    CHECK(wc.wr_id == 9000 &&
              (wc.status == IBV_WC_RETRY_EXC_ERR || (!t_softib() && wc.status != IBV_WC_SUCCESS)),
          "dead peer: the first WRITE fails with %s (wr_id %llu)", ibv_wc_status_str(wc.status),
          (unsigned long long)wc.wr_id);
    for (int i = 1; i < N; i++)
        order = order && t_poll(cq, &wc) && wc.wr_id == 9000 + (uint64_t)i &&
                wc.status == IBV_WC_WR_FLUSH_ERR;
    CHECK(order, "dead peer: the other %d WRITEs are flushed, in order", N - 1);
    if (cnt && t_counters(&c1) == 0)
        CHECK(c1.transport_retries - c0.transport_retries == RETRY &&
                  c1.rdma_writes == c0.rdma_writes,
              "dead peer: %llu retransmissions (expected %d), no WRITE executed",
              (unsigned long long)(c1.transport_retries - c0.transport_retries), RETRY);
    waitpid(v.pid, &status, 0);
    close(v.fd);
    CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dereg_mr(mr) == 0,
          "dead-peer teardown");
    free(buf);
    t_dev_close(&d);
}

int main(void)
{
    struct t_child tc = t_spawn(target, NULL), ic[NRUN];
    struct target_info ti;
    struct t_addr peers[NRUN * NQP];
    int runs[NRUN], ok = 0;

    t_recv(tc.fd, &ti, sizeof(ti));
    for (int r = 0; r < NRUN; r++) {
        runs[r] = r;
        ic[r] = t_spawn(initiator, &runs[r]);
        t_send(ic[r].fd, &ti, sizeof(ti));
        t_recv(ic[r].fd, &peers[r * NQP], NQP * sizeof(struct t_addr));
    }
    t_send(tc.fd, peers, sizeof(peers));
    t_sync(tc.fd); /* target connected */
    t_wait_asleep(ti.pid);
    for (int r = 0; r < NRUN; r++) {
        t_sync(ic[r].fd);
        t_join(&ic[r]);
    }
    CHECK(t_in_sleep(ti.pid), "the target slept through both initiators");
    kill(ti.pid, SIGUSR1);
    t_recv(tc.fd, &ok, sizeof(ok));
    CHECK(ok, "the target found exactly the expected bytes in its memory");
    t_join(&tc);
    dead_peer();
    if (t_softib())
        CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
