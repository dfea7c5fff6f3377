/*
 * Stray and forged datagrams on the UD connection channel while a job runs.
 * Rank 3 is the attacker: besides being an ordinary rank, it opens a UD QP
 * of its own on the job's device (raw verbs, the job's Q_Key) and sends to
 * the client UD QPs of the other ranks and to both data servers' UD QPs:
 *
 *   stray            too long for a message (a failed receive with
 *                    ARMCI_TEST_HOOKS=256's small buffers), then wrong
 *                    Q_Key, too short, garbage, too long for a message --
 *                    each more than the 64 receive buffers a QP may grow
 *                    to, in waves of 8 (a client's first receives) the
 *                    victims drain
 *   forged-requests  REQ/RTU claiming other ranks (and the attacker's own
 *                    rank from another QP): high epochs that used to lock a
 *                    rank out, low ones carrying the attacker's QP
 *   forged-answers   REP/ACK claiming a data server, naming the attacker's
 *                    QP, left waiting in the victims' receive queues so that
 *                    they are read while the victims connect
 *   forged-entries   directory entries (CM_ENTRY) naming the attacker's QP
 *                    as rank 1's, sent to node 1's data server without pause
 *                    while the job connects: node 1's server asks node 0
 *                    (the holder, with ARMCI_DIRECTORY_BYTES=44) for rank
 *                    1's entry, and must believe only the holder's answer
 *   all              all of it, and the forgeries again once connected
 *
 * Then every rank but the attacker moves data through the other node's
 * server (put, get, accumulate, Rmw), checked byte for byte, and the
 * connection counts must be exactly those of the traffic: no connection
 * was created for a forged claim (rank 3 never talks to node 0).
 * Run with 4 processes, ARMCI_NODE_SIZE=2, ARMCI_BARRIER=mpi (so that no
 * connection exists before the attack).
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/fault.h"
#include "core/topology.h"
#include "odcm/cm.h"
#include "odcm/cm_server.h"
#include "odcm/directory.h"
#include "odcm/ud.h"
#include "testutil.h"
#include "transport/progress.h"
#include "verbs/device.h"
#include "verbs/memory.h"

enum { BLOCK = 4096, ATTACKER = 3, WAVES = 10, BUF = 512 };

static int me, nprocs;
static bool stray, forge_requests, forge_answers, forge_entries, after_connect;

/* ---- the attacker's UD QP ---- */

static struct {
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    char *buf;
    struct net_mr *mr;
    struct ibv_ah *ah[8]; /* per target */
    uint64_t rand;
    long sent;
} att;

static void modify(struct ibv_qp_attr *a, int mask, const char *what)
{
    int rc = ibv_modify_qp(att.qp, a, mask);
    CHECK(rc == 0, "ibv_modify_qp %s (attacker's UD QP) failed: %d", what, rc);
}

static void attacker_open(void)
{
    att.cq = ibv_create_cq(vdev.ctx, 16, NULL, NULL, 0);
    CHECK(att.cq, "ibv_create_cq (attacker) failed");
    struct ibv_qp_init_attr init = {
        .send_cq = att.cq,
        .recv_cq = att.cq,
        .qp_type = IBV_QPT_UD,
        .cap = {.max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
    };
    att.qp = ibv_create_qp(vdev.pd, &init);
    CHECK(att.qp, "ibv_create_qp (attacker's UD QP) failed");
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = vdev.port, .qkey = ud_job_qkey()};
    modify(&a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, "RESET->INIT");
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR};
    modify(&a, IBV_QP_STATE, "INIT->RTR");
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = 0};
    modify(&a, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTR->RTS");
    att.buf = aligned_alloc(4096, BUF);
    att.mr = net_reg("ud_attack", att.buf, BUF, false);
    att.rand = 0x5eed;
}

static void attacker_close(void)
{
    for (size_t i = 0; i < sizeof(att.ah) / sizeof(att.ah[0]); i++)
        if (att.ah[i])
            CHECK(ibv_destroy_ah(att.ah[i]) == 0, "ibv_destroy_ah");
    CHECK(ibv_destroy_qp(att.qp) == 0, "ibv_destroy_qp (attacker)");
    CHECK(ibv_destroy_cq(att.cq) == 0, "ibv_destroy_cq (attacker)");
    net_dereg(att.mr);
    free(att.buf);
}

/* Every rank's client UD address and every node's server's (the directory keeps only those
 * of a process's node and what it asked for; each knows its own and gives it here). */
static struct verbs_addr clients[4], servers[2];

static void gather_addresses(void)
{
    struct verbs_addr mine, server = {0};
    CHECK(directory_client(me, &mine), "my own client address is in my node's block");
    int node = armci_domain_my_id(ARMCI_DOMAIN_SMP);
    CHECK(directory_server(node, &server), "my node's server is in my node's block");
    struct verbs_addr all[8];
    MPI_Allgather((struct verbs_addr[]){mine, server}, 2 * sizeof(mine), MPI_BYTE, all,
                  2 * sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < nprocs; r++) {
        clients[r] = all[2 * r];
        servers[armci_domain_id(ARMCI_DOMAIN_SMP, r)] = all[2 * r + 1];
    }
}

/* Targets: 0..nprocs-1 the client UD QP of that rank, nprocs + n the server of node n. */
static struct verbs_addr target_addr(int target)
{
    return target < nprocs ? clients[target] : servers[target - nprocs];
}

static void send_raw(int target, uint32_t qkey, const void *p, size_t len)
{
    if (!att.ah[target]) {
        struct verbs_addr to = target_addr(target);
        struct ibv_ah_attr attr;
        verbs_fill_ah_attr(&attr, &to);
        att.ah[target] = ibv_create_ah(vdev.pd, &attr);
        CHECK(att.ah[target], "ibv_create_ah (attacker, target %d) failed", target);
    }
    memcpy(att.buf, p, len);
    struct ibv_sge sge = {
        .addr = (uintptr_t)att.buf, .length = (uint32_t)len, .lkey = att.mr->lkey};
    struct ibv_send_wr wr = {
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED,
        .wr = {.ud = {.ah = att.ah[target],
                      .remote_qpn = target_addr(target).qpn,
                      .remote_qkey = qkey}},
    };
    struct ibv_send_wr *bad;
    CHECK(ibv_post_send(att.qp, &wr, &bad) == 0, "ibv_post_send (attacker)");
    struct ibv_wc wc;
    int n;
    while ((n = ibv_poll_cq(att.cq, 1, &wc)) == 0)
        ;
    CHECK(n == 1 && wc.status == IBV_WC_SUCCESS, "attacker's send failed");
    att.sent++;
}

static void send_msg(int target, const struct cm_msg *m)
{
    send_raw(target, ud_job_qkey(), m, sizeof(*m));
}

/*
 * The QP a forged message names: the attacker's own, or its QP number on the
 * port of the process it poses as (on a real fabric every process of a host
 * has the same LID and GID: only the sender check tells them apart).
 */
static struct verbs_addr forged_qp(bool on_victims_port, const struct verbs_addr *victim)
{
    struct verbs_addr a = verbs_my_addr(att.qp->qp_num, 0);
    if (on_victims_port) {
        a.lid = victim->lid;
        memcpy(a.gid, victim->gid, sizeof(a.gid));
    }
    return a;
}

/* ---- the attacks ---- */

/*
 * One wave to one target, no more datagrams than its first 8 receive buffers
 * (a client's; a server's are 16). A failing wave: 8 too long for a buffer
 * (WAVES of them are more failed receives than the QP may ever have buffers:
 * their buffers must come back, and on rxe the QP is left in the error state
 * and must be reset). Otherwise 2 the device drops and 8 the receiver reads
 * and refuses.
 */
static void stray_wave(int target, bool failing)
{
    unsigned char junk[BUF];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (unsigned char)test_rand(&att.rand);
    if (failing) {
        for (int i = 0; i < 8; i++)
            send_raw(target, ud_job_qkey(), junk, 100 + (size_t)i * 48);
        return;
    }
    struct cm_msg m = {.type = CM_REQ, .rank = 0, .node = 1, .epoch = 1};
    for (int i = 0; i < 2; i++) /* dropped by the device */
        send_raw(target, ud_job_qkey() ^ 0x1234, &m, sizeof(m));
    for (int i = 0; i < 3; i++) /* too short */
        send_raw(target, ud_job_qkey(), junk, 1 + (size_t)i * (sizeof(m) - 1) / 3);
    for (int i = 0; i < 3; i++) { /* the right length, garbage */
        for (size_t k = 0; k < sizeof(m); k++)
            junk[k] = (unsigned char)test_rand(&att.rand);
        send_raw(target, ud_job_qkey(), junk, sizeof(m));
    }
    for (int i = 0; i < 2; i++) /* too long for a message, fits the buffer */
        send_raw(target, ud_job_qkey(), junk, sizeof(m) + 1 + (size_t)i);
}

/* Requests claiming to be other ranks, to the server of node `node`. */
static void forge_requests_to(int node)
{
    int server = nprocs + node;
    for (int r = 0; r < nprocs; r++) {
        if (armci_domain_id(ARMCI_DOMAIN_SMP, r) == node && r != ATTACKER)
            continue;
        /* A newer attempt than anything real: the real requests would then be "stale". */
        struct cm_msg m = {.type = CM_REQ,
                           .protocol = (uint8_t)cfg.protocol,
                           .rank = r,
                           .node = node,
                           .epoch = 0x7ffffff0u};
        send_msg(server, &m);
        /* The likely real attempts, naming the attacker's QP as the client's. */
        struct verbs_addr victim = clients[r];
        for (uint32_t e = 1; e <= 4; e++) {
            for (int spoof = 1; spoof >= 0; spoof--) {
                m = (struct cm_msg){.type = CM_RTU,
                                    .protocol = (uint8_t)cfg.protocol,
                                    .rank = r,
                                    .node = node,
                                    .epoch = e,
                                    .qp = forged_qp(spoof, &victim)};
                send_msg(server, &m);
                m.type = CM_REQ;
                send_msg(server, &m);
            }
        }
    }
}

/* Answers claiming to be node `node`'s server, to rank r's client: 32 datagrams, of which the
 * client's first 8 receives hold 8 until it connects (the device drops the rest). */
static void forge_answers_to(int r, int node)
{
    struct verbs_addr victim = servers[node];
    for (int spoof = 1; spoof >= 0; spoof--) {
        for (uint32_t e = 1; e <= 8; e++) {
            struct cm_msg m = {.type = CM_REP,
                               .protocol = (uint8_t)cfg.protocol,
                               .rank = r,
                               .node = node,
                               .epoch = e,
                               .credits = 8,
                               .gather = 16,
                               .qp = forged_qp(spoof, &victim)};
            send_msg(r, &m);
            m.type = CM_ACK;
            send_msg(r, &m);
        }
    }
}

/* The forged entries, until the job's traffic is over (a thread of the attacker). */
static int flood_over;

static void *flood_entries(void *arg)
{
    (void)arg;
    struct verbs_addr mine = forged_qp(false, NULL);
    struct cm_msg m = {.type = CM_ENTRY,
                       .rank = 1,
                       .node = 0,
                       .epoch = 1,
                       .credits = (int32_t)mine.qpn,
                       .qp = mine};
    while (!__atomic_load_n(&flood_over, __ATOMIC_ACQUIRE))
        send_msg(nprocs + 1, &m);
    return NULL;
}

/* Lets every process read what arrived on its client UD QP (the servers read on their own). */
static void drain(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 16; i++)
        progress_poll();
    usleep(20000); /* the data-server threads */
    MPI_Barrier(MPI_COMM_WORLD);
}

static void attack(bool connected)
{
    int nodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    if (stray) {
        /* Failed receives first: if their buffers were lost, nothing after would arrive. */
        for (int w = 0; w < 2 * WAVES; w++) {
            if (me == ATTACKER)
                for (int t = 0; t < nprocs + nodes; t++)
                    if (t != ATTACKER)
                        stray_wave(t, w < WAVES);
            drain();
        }
    }
    if (me == ATTACKER && forge_requests)
        for (int node = 0; node < nodes; node++)
            forge_requests_to(node);
    /* Not drained: these wait in the receive queues until the victims connect. */
    if (me == ATTACKER && forge_answers)
        for (int r = 0; r < nprocs; r++)
            if (r != ATTACKER)
                forge_answers_to(r, 1 - armci_domain_id(ARMCI_DOMAIN_SMP, r));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == ATTACKER)
        printf("attacker: %ld datagrams sent (%s)\n", att.sent,
               connected ? "connections established" : "before any connection");
    usleep(20000);
}

/* ---- the job's own traffic ---- */

/* Ranks 0-2 talk to the other node; rank 3 (the attacker) only to its own node. */
static int partner(void)
{
    return me == ATTACKER ? 2 : (me + 2) % nprocs;
}

static void traffic(void **seg, uint64_t seed)
{
    int p = partner();
    unsigned char out[BLOCK], in[BLOCK];
    fill_pattern(out, BLOCK, seed + (uint64_t)me);
    ARMCI_Put(out, (char *)seg[p] + (size_t)me * BLOCK, BLOCK, p);
    ARMCI_Fence(p);
    ARMCI_Get((char *)seg[p] + (size_t)me * BLOCK, in, BLOCK, p);
    CHECK(memcmp(in, out, BLOCK) == 0, "data through node %d's server changed",
          armci_domain_id(ARMCI_DOMAIN_SMP, p));
    /* Through the server: accumulate and Rmw on a counter of every rank's partner. */
    long *counter = (long *)((char *)seg[p] + (size_t)nprocs * BLOCK);
    long ones[16], scale = 1;
    for (int i = 0; i < 16; i++)
        ones[i] = 1;
    ARMCI_Acc(ARMCI_ACC_LNG, &scale, ones, counter, sizeof(ones), p);
    int old;
    ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &old, (int *)(counter + 16), 1, p);
    ARMCI_Fence(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    nprocs = armci_msg_nproc();
    const char *mode = argc > 1 ? argv[1] : "";
    bool all = !strcmp(mode, "all");
    forge_entries = all || !strcmp(mode, "forged-entries");
    stray = all || !strcmp(mode, "stray");
    forge_requests = all || !strcmp(mode, "forged-requests");
    forge_answers = all || !strcmp(mode, "forged-answers");
    after_connect = all;
    CHECK(stray || forge_requests || forge_answers || forge_entries, "unknown mode '%s'", mode);
    CHECK(nprocs == 4 && armci_domain_count(ARMCI_DOMAIN_SMP) == 2,
          "run with 4 processes in 2 nodes of 2");
    CHECK(cfg.barrier == CFG_BARRIER_MPI, "run with ARMCI_BARRIER=mpi");

    size_t bytes = (size_t)nprocs * BLOCK + 32 * sizeof(long);
    void *seg[4];
    ARMCI_Malloc(seg, (armci_size_t)bytes);
    memset(seg[me], 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(cm_conn_count() == 0, "connected before the attack");
    gather_addresses();

    if (me == ATTACKER)
        attacker_open();
    attack(false);
    pthread_t flood;
    if (me == ATTACKER && forge_entries)
        CHECK(pthread_create(&flood, NULL, flood_entries, NULL) == 0, "pthread_create");
    traffic(seg, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == ATTACKER && forge_entries) {
        __atomic_store_n(&flood_over, 1, __ATOMIC_RELEASE);
        pthread_join(flood, NULL);
        printf("attacker: %ld datagrams sent (with the forged entries)\n", att.sent);
    }
    if (after_connect) {
        attack(true);
        traffic(seg, 2);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Byte-exact results, and the connections of the traffic, no more. */
    int rounds = after_connect ? 2 : 1;
    int senders = 0;
    for (int r = 0; r < nprocs; r++)
        if ((r == ATTACKER ? 2 : (r + 2) % nprocs) == me)
            senders++;
    long *counter = (long *)((char *)seg[me] + (size_t)nprocs * BLOCK);
    for (int i = 0; i < 16; i++)
        CHECK(counter[i] == (long)senders * rounds, "accumulate: element %d is %ld, expected %d", i,
              counter[i], senders * rounds);
    CHECK(*(int *)(counter + 16) == senders * rounds, "Rmw: counter is %d, expected %d",
          *(int *)(counter + 16), senders * rounds);
    CHECK(cm_conn_count() == (me == ATTACKER ? 0 : 1), "%d client connections, expected %d",
          cm_conn_count(), me == ATTACKER ? 0 : 1);
    if (topo_is_master()) {
        /* Node 0 serves rank 2; node 1 serves ranks 0 and 1. */
        int expected = topo.my_node == 0 ? 1 : 2;
        CHECK(cm_server_conn_count() == expected,
              "node %d's server has %d connections, expected %d", topo.my_node,
              cm_server_conn_count(), expected);
    }
    /* Without loss, everything the receivers could read was read and refused (a QP left in
     * ERR with no completion, SOFTIB_UD_ERR_SILENT, or deaf after a reset,
     * SOFTIB_UD_DEAF_RESET, drops what comes until it is found). */
    if (stray && getenv("SOFTIB_UD_LOSS") == NULL && getenv("SOFTIB_UD_ERR_SILENT") == NULL &&
        getenv("SOFTIB_UD_DEAF_RESET") == NULL && me != ATTACKER) {
        CHECK(cm_refused_datagrams() > 64, "client refused only %ld datagrams",
              cm_refused_datagrams());
        if (topo_is_master())
            CHECK(cm_server_refused_datagrams() > 64, "server refused only %ld datagrams",
                  cm_server_refused_datagrams());
    }
    /* With the buffers as shipped (port MTU + GRH), no datagram fails a receive, so the QP
     * is never reset (rxe left reset QPs deaf); the small-buffer test point and the knobs
     * that break the QP on purpose are the only ways to a reset. */
    if (!(cfg.test_hooks & FAULT_UD_SMALL_BUFFERS) && getenv("SOFTIB_UD_ERR_SILENT") == NULL &&
        getenv("SOFTIB_UD_DEAF_RESET") == NULL && me != ATTACKER) {
        CHECK(cm_ud_restarts() == 0, "the client's UD QP was reset %ld times", cm_ud_restarts());
        if (topo_is_master())
            CHECK(cm_server_ud_restarts() == 0, "the server's UD QP was reset %ld times",
                  cm_server_ud_restarts());
    }
    if (me == ATTACKER)
        attacker_close();
    MPI_Barrier(MPI_COMM_WORLD);
    ARMCI_Free(seg[me]);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
