/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One process: device and port queries, registration rules, the QP state
 * machine and its attribute masks, and bad input of every kind (NULL
 * pointers, destroyed objects, wrong opcode for the QP type, zero-length
 * and oversized work requests, too many SGEs, queue overflow).
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct t_dev dev;

/* A completion within 200 ms? */
static bool t_poll_briefly(struct ibv_cq *cq, struct ibv_wc *wc)
{
    double t0 = t_now();

    while (t_now() - t0 < 0.2)
        if (ibv_poll_cq(cq, 1, wc) == 1)
            return true;
    return false;
}

static void queries(void)
{
    struct ibv_device_attr da;
    union ibv_gid gid;
    __be16 pkey;

    CHECK(ibv_query_device(dev.ctx, &da) == 0, "ibv_query_device");
    CHECK(da.phys_port_cnt == 1 && da.max_qp > 0 && da.max_sge >= 4, "device attributes");
    CHECK(dev.port.state == IBV_PORT_ACTIVE, "port ACTIVE");
    CHECK(dev.port.active_mtu >= IBV_MTU_1024, "active_mtu %d", dev.port.active_mtu);
    if (!dev.roce)
        CHECK(dev.port.lid != 0, "IB port has a LID");
    CHECK(ibv_query_gid(dev.ctx, 1, 0, &gid) == 0, "GID 0");
    CHECK(ibv_query_pkey(dev.ctx, 1, 0, &pkey) == 0 && pkey == 0xffff, "default P_Key");
    CHECK(ibv_query_port(dev.ctx, 2, &(struct ibv_port_attr){0}) != 0, "port 2 does not exist");
    CHECK(strcmp(ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), "remote access error") == 0,
          "ibv_wc_status_str");
    CHECK(strcmp(ibv_port_state_str(IBV_PORT_ACTIVE), "active") == 0, "ibv_port_state_str");
    CHECK(ibv_fork_init() == 0, "ibv_fork_init");
}

static void registration(void)
{
    char *buf = t_alloc(8192);
    struct ibv_mr *mr;

    errno = 0;
    CHECK(!ibv_reg_mr(dev.pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL,
          "REMOTE_WRITE without LOCAL_WRITE -> EINVAL");
    errno = 0;
    CHECK(!ibv_reg_mr(dev.pd, buf, 4096, IBV_ACCESS_REMOTE_ATOMIC) && errno == EINVAL,
          "REMOTE_ATOMIC without LOCAL_WRITE -> EINVAL");
    errno = 0;
    CHECK(!ibv_reg_mr(dev.pd, (void *)4096, 4096, IBV_ACCESS_LOCAL_WRITE) &&
              (errno == EFAULT || (!t_softib() && errno == ENOMEM)),
          "unmapped range -> EFAULT");
    errno = 0;
    CHECK(!ibv_reg_mr(dev.pd, buf, 0, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
          "zero length -> EINVAL");
    mr = ibv_reg_mr(dev.pd, buf + 1, 100, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr && mr->lkey && mr->addr == buf + 1 && mr->length == 100, "odd-address MR");
    if (mr)
        CHECK(ibv_dereg_mr(mr) == 0, "dereg");
    mr = ibv_reg_mr(dev.pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
    REQUIRE(mr, "reg");
    errno = 0;
    CHECK(ibv_dealloc_pd(dev.pd) == EBUSY, "dealloc_pd with an MR -> EBUSY");
    CHECK(ibv_dereg_mr(mr) == 0, "dereg");
    free(buf);
}

static void create_limits(void)
{
    struct ibv_cq *cq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
    struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC};
    struct ibv_qp *qp;

    REQUIRE(cq, "create_cq");
    errno = 0;
    CHECK(!ibv_create_cq(dev.ctx, 0, NULL, NULL, 0) && errno == EINVAL, "CQ of 0 entries");
    errno = 0;
    CHECK(!ibv_create_cq(dev.ctx, 100000000, NULL, NULL, 0) && errno == EINVAL,
          "CQ beyond max_cqe");
    a.cap.max_send_wr = 1 << 24;
    a.cap.max_recv_wr = 4;
    errno = 0;
    CHECK(!ibv_create_qp(dev.pd, &a) && (errno == ENOMEM || (!t_softib() && errno == EINVAL)),
          "max_send_wr too large -> ENOMEM");
    a.cap.max_send_wr = 4;
    a.cap.max_send_sge = 1000;
    errno = 0;
    CHECK(!ibv_create_qp(dev.pd, &a) && errno == EINVAL, "max_send_sge too large -> EINVAL");
    a.cap.max_send_sge = 1;
    a.cap.max_inline_data = 1 << 20;
    errno = 0;
    CHECK(!ibv_create_qp(dev.pd, &a) && errno == EINVAL, "max_inline_data too large -> EINVAL");
    a.cap.max_inline_data = 0;
    qp = ibv_create_qp(dev.pd, &a);
    REQUIRE(qp, "create RC QP");
    CHECK(qp->qp_num > 1 && qp->qp_num <= 0xffffff && qp->state == IBV_QPS_RESET, "QPN, RESET");
    CHECK(ibv_destroy_cq(cq) == EBUSY, "destroy CQ in use -> EBUSY");
    CHECK(ibv_destroy_qp(qp) == 0, "destroy QP");
    CHECK(ibv_destroy_cq(cq) == 0, "destroy CQ");
}

/* The attribute masks of every transition, with rdma-core's errnos. */
static void state_machine_rc(struct ibv_cq *cq)
{
    struct ibv_qp *qp = t_qp(&dev, cq, IBV_QPT_RC, 4, NULL);
    struct ibv_qp_attr a;
    struct t_addr self;
    char buf[64];
    struct ibv_mr *mr = ibv_reg_mr(dev.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);

    REQUIRE(mr, "reg");
    t_addr_of(&dev, qp, &self);
    CHECK(t_post_recv(qp, buf, 8, mr->lkey, 1) == EINVAL, "post_recv in RESET -> EINVAL");
    CHECK(t_post_send(qp, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 0, 1) == EINVAL,
          "post_send in RESET -> EINVAL");
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RESET->RTR is illegal");
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == EINVAL,
          "RC RESET->INIT without ACCESS_FLAGS");
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
                            IBV_QP_QKEY) == EINVAL,
          "RC RESET->INIT with QKEY (not allowed)");
    a.port_num = 2;
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
              EINVAL,
          "port 2 -> EINVAL");
    CHECK(t_rc_init(qp, IBV_ACCESS_LOCAL_WRITE) == 0, "RESET->INIT");
    CHECK(t_query(qp).qp_state == IBV_QPS_INIT, "query INIT");
    CHECK(t_post_recv(qp, buf, 8, mr->lkey, 1) == 0, "post_recv in INIT is allowed");
    CHECK(t_post_send(qp, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 0, 1) == EINVAL,
          "post_send in INIT -> EINVAL");
    a.qp_state = IBV_QPS_RTS;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "INIT->RTS is illegal");
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = qp->qp_num;
    t_av(&dev, &self, &a.ah_attr);
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC) == EINVAL,
          "INIT->RTR without MIN_RNR_TIMER");
    CHECK(t_rc_rtr(&dev, qp, &self, 12) == 0, "INIT->RTR");
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                            IBV_QP_MAX_QP_RD_ATOMIC) == EINVAL,
          "RTR->RTS without TIMEOUT");
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                            IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_DEST_QPN) == EINVAL,
          "RTR->RTS with DEST_QPN (not allowed)");
    a.cur_qp_state = IBV_QPS_INIT;
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                            IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == EINVAL,
          "wrong CUR_STATE");
    CHECK(t_rc_rts(qp, self.psn, 14, 7, 7) == 0, "RTR->RTS");
    a.qp_state = IBV_QPS_INIT;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RTS->INIT is illegal");
    a.qp_state = IBV_QPS_RTS;
    a.min_rnr_timer = 3;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER) == 0,
          "RTS->RTS with MIN_RNR_TIMER");
    a.qp_state = IBV_QPS_ERR;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "RTS->ERR");
    CHECK(t_query(qp).qp_state == IBV_QPS_ERR, "query ERR");
    CHECK(t_post_send(qp, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 0, 7) == 0,
          "post_send in ERR is accepted");
    CHECK(t_post_recv(qp, buf, 8, mr->lkey, 8) == 0, "post_recv in ERR is accepted");
    if (t_softib()) {
        /* all three flushed: the receive posted in INIT and both new WRs */
        uint64_t seen = 0;
        struct ibv_wc wc;

        for (int i = 0; i < 3 && t_poll(cq, &wc); i++) {
            CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id < 64, "flush of wr %llu: %s",
                  (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
            seen |= 1ull << (wc.wr_id & 63);
        }
        CHECK(seen == ((1ull << 1) | (1ull << 7) | (1ull << 8)), "flushed in ERR: %#llx",
              (unsigned long long)seen);
    } else {
        /* rxe (6.1) flushes them too, but with unreliable wr_ids and counts */
        struct ibv_wc wc;
        int n = 0;

        while (t_poll_briefly(cq, &wc))
            n += wc.status == IBV_WC_WR_FLUSH_ERR;
        CHECK(n >= 1, "flushed in ERR (%d)", n);
    }
    a.qp_state = IBV_QPS_RTS;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "ERR->RTS is illegal");
    a.qp_state = IBV_QPS_RESET;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "ERR->RESET");
    CHECK(t_query(qp).qp_state == IBV_QPS_RESET, "query RESET");
    CHECK(t_rc_init(qp, IBV_ACCESS_LOCAL_WRITE) == 0, "RESET->INIT again");
    CHECK(ibv_destroy_qp(qp) == 0, "destroy");
    CHECK(ibv_dereg_mr(mr) == 0, "dereg");
}

static void state_machine_ud(struct ibv_cq *cq)
{
    struct ibv_qp *qp = t_qp(&dev, cq, IBV_QPT_UD, 4, NULL);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234};

    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == EINVAL,
          "UD RESET->INIT without QKEY");
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY |
                            IBV_QP_ACCESS_FLAGS) == EINVAL,
          "UD RESET->INIT with ACCESS_FLAGS");
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0,
          "UD RESET->INIT");
    a.qp_state = IBV_QPS_RTR;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "UD INIT->RTR");
    a.qp_state = IBV_QPS_RTS;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "UD RTR->RTS without SQ_PSN");
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0, "UD RTR->RTS");
    CHECK(ibv_destroy_qp(qp) == 0, "destroy");
}

/* Bad input: an errno or an error completion, never a crash. */
static void bad_input(struct ibv_cq *cq)
{
    struct ibv_qp *a = t_qp(&dev, cq, IBV_QPT_RC, 4, NULL);
    struct ibv_qp *u = t_qp(&dev, cq, IBV_QPT_UD, 4, NULL);
    char *buf = t_alloc(1 << 16);
    struct ibv_mr *mr = ibv_reg_mr(dev.pd, buf, 1 << 16, T_ACCESS_ALL);
    struct ibv_sge sge[33];
    struct ibv_send_wr wr, *bad = NULL;
    struct ibv_recv_wr rwr, *rbad = NULL;
    struct t_addr self;
    struct ibv_wc wc;
    int i, n;

    REQUIRE(mr, "reg");
    t_addr_of(&dev, a, &self);
    REQUIRE(t_rc_connect(&dev, a, &self, T_ACCESS_ALL) == 0, "self-connected RC QP");
    REQUIRE(t_ud_ready(u, 0x11) == 0, "UD ready");

    for (i = 0; i < 33; i++) {
        sge[i].addr = (uintptr_t)buf + (uint64_t)i * 8;
        sge[i].length = 8;
        sge[i].lkey = mr->lkey;
    }
    memset(&wr, 0, sizeof(wr));
    wr.sg_list = sge;
    wr.opcode = IBV_WR_SEND;
    wr.num_sge = 33; /* the QP asked for 4; rxe may round up, but not past 32 */
    CHECK(ibv_post_send(a, &wr, &bad) == EINVAL && bad == &wr, "33 SGEs -> EINVAL, bad_wr set");
    memset(&rwr, 0, sizeof(rwr));
    rwr.sg_list = sge;
    rwr.num_sge = 33;
    CHECK(ibv_post_recv(a, &rwr, &rbad) == EINVAL && rbad == &rwr, "recv with 33 SGEs");

    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    {
        /* a valid AH: rdma-core providers dereference it for any UD WR */
        struct ibv_ah_attr av;

        t_av(&dev, &self, &av);
        wr.wr.ud.ah = ibv_create_ah(dev.pd, &av);
        REQUIRE(wr.wr.ud.ah, "create_ah");
    }
    n = ibv_post_send(u, &wr, &bad);
    CHECK(ibv_destroy_ah(wr.wr.ud.ah) == 0, "destroy_ah");
    memset(&wr.wr, 0, sizeof(wr.wr));
    if (n == 0) /* rxe accepts it and fails the WR */
        CHECK(t_poll(cq, &wc) && wc.status != IBV_WC_SUCCESS, "RDMA WRITE on UD fails");
    else
        CHECK(n == EINVAL, "RDMA WRITE on a UD QP -> EINVAL");
    if (t_softib()) {
        wr.opcode = (enum ibv_wr_opcode)77;
        CHECK(ibv_post_send(a, &wr, &bad) == EINVAL, "unknown opcode -> EINVAL");
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        sge[0].length = 4;
        CHECK(ibv_post_send(a, &wr, &bad) == EINVAL, "4-byte atomic -> EINVAL");
        sge[0].length = 8;
        wr.wr.atomic.remote_addr = (uintptr_t)buf + 3;
        CHECK(ibv_post_send(a, &wr, &bad) == EINVAL, "misaligned atomic -> EINVAL");
    }
    sge[0].length = 100;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_INLINE;
    CHECK(ibv_post_send(a, &wr, &bad) == EINVAL, "inline beyond max_inline_data -> EINVAL");
    wr.send_flags = IBV_SEND_SIGNALED;

    /* zero-length SEND and RDMA WRITE are legal */
    CHECK(t_post_recv(a, buf, 16, mr->lkey, 50) == 0, "recv");
    CHECK(t_post_send(a, IBV_WR_SEND, buf, 0, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 51) == 0,
          "zero-length send");
    for (i = 0; i < 2; i++) {
        CHECK(t_poll(cq, &wc) && wc.status == IBV_WC_SUCCESS, "zero-length send completes");
        if (wc.opcode == IBV_WC_RECV)
            CHECK(wc.byte_len == 0, "zero-length receive");
    }
    CHECK(t_post_send(a, IBV_WR_RDMA_WRITE, buf, 0, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 52) == 0,
          "zero-length write");
    t_expect(cq, IBV_WC_SUCCESS, 52, "zero-length write completes");

    /* an oversized send fails (errno on softib, an error completion elsewhere) */
    if (t_softib()) {
        sge[0].length = 0x80000000u;
        CHECK(ibv_post_send(a, &wr, &bad) == EINVAL, "2 GiB message -> EINVAL");
        sge[0].length = 8;
    }

    /* more WRs than the send queue holds: ENOMEM, never an overflow.
     * Receives are not posted, so RNR (infinite) keeps the queue full. */
    {
        struct ibv_qp_init_attr ia;
        struct ibv_qp_attr qa;

        ibv_query_qp(a, &qa, IBV_QP_CAP, &ia);
        for (i = 0; i < (int)qa.cap.max_send_wr; i++)
            if (t_post_send(a, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 60 + i))
                break;
        CHECK(i == (int)qa.cap.max_send_wr, "the send queue holds max_send_wr (%d of %u)", i,
              qa.cap.max_send_wr);
        CHECK(t_post_send(a, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, IBV_SEND_SIGNALED, 99) == ENOMEM,
              "one more -> ENOMEM");
        for (i = 0; i < (int)qa.cap.max_recv_wr; i++)
            if (t_post_recv(u, buf, 64, mr->lkey, 200 + i))
                break;
        CHECK(t_post_recv(u, buf, 64, mr->lkey, 299) == ENOMEM, "receive queue full -> ENOMEM");
    }
    CHECK(ibv_destroy_qp(a) == 0, "destroy RC with work outstanding");
    CHECK(ibv_destroy_qp(u) == 0, "destroy UD");
    while (ibv_poll_cq(cq, 1, &wc) > 0)
        ;

    if (t_softib()) {
        struct ibv_qp *dead = t_qp(&dev, cq, IBV_QPT_RC, 4, NULL);
        struct ibv_cq *dcq = ibv_create_cq(dev.ctx, 4, NULL, NULL, 0);

        /* NULL and destroyed objects: rdma-core would crash; softib says EINVAL */
        CHECK(ibv_destroy_qp(dead) == 0, "destroy");
        CHECK(ibv_destroy_qp(dead) == EINVAL, "destroy twice -> EINVAL");
        CHECK(t_post_send(dead, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 0, 1) == EINVAL,
              "post on destroyed QP");
        CHECK(t_post_recv(dead, buf, 8, mr->lkey, 1) == EINVAL, "recv on destroyed QP");
        CHECK(ibv_modify_qp(dead, &(struct ibv_qp_attr){.qp_state = IBV_QPS_INIT}, IBV_QP_STATE) ==
                  EINVAL,
              "modify destroyed QP");
        CHECK(ibv_destroy_cq(dcq) == 0, "destroy CQ");
        CHECK(ibv_poll_cq(dcq, 1, &wc) < 0, "poll destroyed CQ -> error");
        CHECK(ibv_req_notify_cq(dcq, 0) == EINVAL, "arm destroyed CQ");
        CHECK(ibv_destroy_qp(NULL) == EINVAL, "destroy NULL QP");
        CHECK(ibv_destroy_cq(NULL) == EINVAL, "destroy NULL CQ");
        CHECK(ibv_dereg_mr(NULL) == EINVAL, "dereg NULL");
        CHECK(ibv_dealloc_pd(NULL) == EINVAL, "dealloc NULL");
        errno = 0;
        CHECK(!ibv_reg_mr(NULL, buf, 8, 0) && errno == EINVAL, "reg_mr on NULL PD");
        CHECK(!ibv_create_qp(dev.pd, NULL) && errno == EINVAL, "create_qp NULL attr");
        CHECK(!ibv_create_cq(NULL, 4, NULL, NULL, 0), "create_cq NULL context");
        CHECK(!ibv_alloc_pd(NULL), "alloc_pd NULL context");
        CHECK(ibv_query_qp(dead, &(struct ibv_qp_attr){0}, 0, &(struct ibv_qp_init_attr){0}) ==
                  EINVAL,
              "query destroyed QP");
        CHECK(!ibv_create_ah(dev.pd, NULL), "create_ah NULL");
        CHECK(ibv_get_cq_event(NULL, NULL, NULL) == -1, "get_cq_event NULL");
    }
    CHECK(ibv_dereg_mr(mr) == 0, "dereg");
    free(buf);
}

static void srq_and_ah(struct ibv_cq *cq)
{
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
    struct ibv_srq *srq = ibv_create_srq(dev.pd, &sa);
    struct ibv_srq_attr at;
    struct ibv_ah_attr av;
    struct t_addr self;
    struct ibv_qp *qp;
    struct ibv_ah *ah;
    char buf[64];
    struct ibv_mr *mr = ibv_reg_mr(dev.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);

    REQUIRE(srq && mr, "create_srq");
    qp = t_qp(&dev, cq, IBV_QPT_RC, 4, srq);
    CHECK(t_post_recv(qp, buf, 8, mr->lkey, 1) == EINVAL, "post_recv on an SRQ QP -> EINVAL");
    CHECK(ibv_destroy_srq(srq) == EBUSY, "destroy SRQ in use -> EBUSY");
    at.srq_limit = 4;
    CHECK(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT) == 0, "arm SRQ limit");
    CHECK(ibv_query_srq(srq, &at) == 0 && at.max_wr >= 16, "query SRQ");
    CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_srq(srq) == 0, "destroy SRQ");

    t_addr_of(&dev, NULL, &self);
    t_av(&dev, &self, &av);
    ah = ibv_create_ah(dev.pd, &av);
    CHECK(ah != NULL, "create_ah to ourselves");
    if (ah)
        CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");
    av.port_num = 3;
    CHECK(!ibv_create_ah(dev.pd, &av), "AH on port 3 fails");
    CHECK(ibv_dereg_mr(mr) == 0, "dereg");
}

int main(void)
{
    struct ibv_cq *cq;

    t_dev_open(&dev);
    queries();
    registration();
    create_limits();
    cq = ibv_create_cq(dev.ctx, 256, NULL, NULL, 0);
    REQUIRE(cq, "create_cq");
    state_machine_rc(cq);
    state_machine_ud(cq);
    bad_input(cq);
    srq_and_ah(cq);
    CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");
    t_dev_close(&dev);
    if (t_softib())
        CHECK(t_fabric_file_gone(), "the fabric file is removed by the last close");
    return t_summary();
}
