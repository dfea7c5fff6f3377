/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCE addressing (softib with SOFTIB_LINK_LAYER=ethernet, or rxe): no
 * LIDs, GIDs 0 and 1, address vectors without a GRH refused, RC and UD
 * working through GIDs, and UD completions carrying a GRH.
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QKEY 0x2222

static struct t_dev dev;

static void port_and_gids(void)
{
    static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    union ibv_gid g0, g1;

    CHECK(dev.port.lid == 0, "no LID on RoCE (%u)", dev.port.lid);
    CHECK(ibv_query_gid(dev.ctx, 1, 0, &g0) == 0 && g0.raw[0] == 0xfe && g0.raw[1] == 0x80,
          "GID 0 is link-local");
    CHECK(ibv_query_gid(dev.ctx, 1, 1, &g1) == 0 && !memcmp(g1.raw, v4, sizeof(v4)),
          "GID 1 is IPv4-mapped (RoCEv2)");
    CHECK(dev.gid_index == 1, "tests address through GID 1");
}

static void refusals(struct ibv_cq *cq)
{
    struct ibv_ah_attr av = {.port_num = 1, .dlid = 1};
    struct ibv_qp *qp = t_qp(&dev, cq, IBV_QPT_RC, 4, NULL);
    struct ibv_qp_attr a;
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

    errno = 0;
    CHECK(!ibv_create_ah(dev.pd, &av) && errno == EINVAL, "AH without GRH -> EINVAL");
    REQUIRE(t_rc_init(qp, T_ACCESS_ALL) == 0, "INIT");
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = qp->qp_num;
    a.ah_attr = av;
    CHECK(ibv_modify_qp(qp, &a, mask) == EINVAL, "RTR without GRH -> EINVAL");
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = dev.gid;
    a.ah_attr.grh.sgid_index = 77;
    CHECK(ibv_modify_qp(qp, &a, mask) != 0, "RTR with a GID index that does not exist");
    CHECK(t_query(qp).qp_state == IBV_QPS_INIT, "still INIT");
    CHECK(ibv_destroy_qp(qp) == 0, "destroy");
}

static void traffic(struct ibv_cq *cq)
{
    struct ibv_qp *a = t_qp(&dev, cq, IBV_QPT_RC, 8, NULL),
                  *b = t_qp(&dev, cq, IBV_QPT_RC, 8, NULL);
    struct ibv_qp *u = t_qp(&dev, cq, IBV_QPT_UD, 8, NULL),
                  *v = t_qp(&dev, cq, IBV_QPT_UD, 8, NULL);
    uint8_t *buf = t_alloc(8192);
    struct ibv_mr *mr = ibv_reg_mr(dev.pd, buf, 8192, T_ACCESS_ALL);
    struct t_addr aa, ba, va;
    struct ibv_ah_attr av;
    struct ibv_ah *ah, *back;
    struct ibv_sge sge;
    struct ibv_send_wr wr, *bad;
    struct ibv_wc wc;

    REQUIRE(mr, "reg");
    t_addr_of(&dev, a, &aa);
    t_addr_of(&dev, b, &ba);
    REQUIRE(t_rc_connect(&dev, a, &ba, T_ACCESS_ALL) == 0 &&
                t_rc_connect(&dev, b, &aa, T_ACCESS_ALL) == 0,
            "RC through GIDs");
    t_fill(buf, 100, 1);
    CHECK(t_post_recv(b, buf + 4096, 128, mr->lkey, 2) == 0, "recv");
    CHECK(t_post_send(a, IBV_WR_SEND, buf, 100, mr->lkey, 0, 0, 0, 1) == 0, "send");
    REQUIRE(t_poll(cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2, "RC receive");
    CHECK(wc.byte_len == 100 && t_same(buf + 4096, 100, 1), "RC payload");

    REQUIRE(t_ud_ready(u, QKEY) == 0 && t_ud_ready(v, QKEY) == 0, "UD ready");
    t_addr_of(&dev, v, &va);
    t_av(&dev, &va, &av);
    ah = ibv_create_ah(dev.pd, &av);
    REQUIRE(ah, "AH with GRH");
    CHECK(t_post_recv(v, buf + 4096, 256, mr->lkey, 3) == 0, "UD recv");
    CHECK(t_post_recv(u, buf + 6144, 256, mr->lkey, 4) == 0, "UD recv");
    memset(&wr, 0, sizeof(wr));
    sge.addr = (uintptr_t)buf;
    sge.length = 60;
    sge.lkey = mr->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = v->qp_num;
    wr.wr.ud.remote_qkey = QKEY;
    CHECK(ibv_post_send(u, &wr, &bad) == 0, "UD send");
    REQUIRE(t_poll(cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 3, "UD receive");
    CHECK((wc.wc_flags & IBV_WC_GRH) && wc.byte_len == 100 && wc.src_qp == u->qp_num,
          "RoCE datagram: GRH flag %#x, byte_len %u", wc.wc_flags, wc.byte_len);
    CHECK(t_same(buf + 4096 + 40, 60, 1), "payload after the GRH");
    back = ibv_create_ah_from_wc(dev.pd, &wc, (struct ibv_grh *)(buf + 4096), 1);
    CHECK(back != NULL, "AH from a RoCE completion");
    if (back) {
        wr.wr.ud.ah = back;
        wr.wr.ud.remote_qpn = wc.src_qp;
        CHECK(ibv_post_send(v, &wr, &bad) == 0, "reply");
        CHECK(t_poll(cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 4, "reply arrives");
        CHECK(ibv_destroy_ah(back) == 0, "destroy_ah");
    }
    CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");
    CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0, "destroy");
    CHECK(ibv_destroy_qp(u) == 0 && ibv_destroy_qp(v) == 0, "destroy");
    CHECK(ibv_dereg_mr(mr) == 0, "dereg");
    free(buf);
}

int main(void)
{
    struct ibv_cq *cq;

    t_dev_open(&dev);
    if (!dev.roce) {
        t_skip("the port is not Ethernet (set SOFTIB_LINK_LAYER=ethernet)");
        t_dev_close(&dev);
        return t_summary();
    }
    cq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
    REQUIRE(cq, "create_cq");
    port_and_gids();
    refusals(cq);
    traffic(cq);
    CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");
    t_dev_close(&dev);
    if (t_softib())
        CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
