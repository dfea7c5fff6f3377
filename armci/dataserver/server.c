/* The data server: resources, connections, the progress loop and replies. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config.h"
#include "../error.h"
#include "../net.h"
#include "../odcm/cm_server.h"
#include "../odcm/qp.h"
#include "../server_link.h"
#include "../util.h"
#include "server_internal.h"

struct server srv;

#define CQ_BATCH 32
#define OUT_BUFS 16
/* While idle the server sleeps at most this long: a safety net for providers
 * that progress deferred work only when polled. */
#define IDLE_WAKEUP_MS 100
/* How long the server keeps polling after its last request before it sleeps. */
#define LINGER_SECONDS 50e-6

size_t server_out_buf_size(void)
{
    return cfg.bounce_size;
}

static int sq_depth(void)
{
    /* Every request gets one reply, a packed get one RDMA write more. */
    return 2 * cfg.server_credits + 8;
}

static uint64_t recv_wr_id(int index)
{
    return wr_id_make((uint64_t)index, WR_TAG_RECV);
}

static void post_buffer(int index)
{
    verbs_post_srq_buffer(srv.srq, srv.bufs + (size_t)index * srv.buf_size, (uint32_t)srv.buf_size,
                          srv.bufs_mr->lkey, recv_wr_id(index), "data server request buffer");
}

static void create_queues(void)
{
    srv.channel = ibv_create_comp_channel(vdev.ctx);
    if (!srv.channel)
        armci_die("ARMCI_Init", "ibv_create_comp_channel (data server) failed: %s",
                  strerror(errno));
    set_nonblocking(srv.channel->fd, "data server completion channel");
    int recv_cqe = srv.nbufs + cm_server_recv_cq_entries() + 16;
    srv.recv_cq = ibv_create_cq(vdev.ctx, recv_cqe, NULL, srv.channel, 0);
    srv.send_budget = 2 * srv.nbufs + 64;
    srv.send_cq =
        ibv_create_cq(vdev.ctx, srv.send_budget + cm_server_send_cq_entries(), NULL, NULL, 0);
    if (!srv.recv_cq || !srv.send_cq)
        armci_die("ARMCI_Init", "ibv_create_cq (data server) failed: %s", strerror(errno));
    struct ibv_srq_init_attr attr = {.attr = {.max_wr = (uint32_t)srv.nbufs, .max_sge = 1}};
    srv.srq = ibv_create_srq(vdev.pd, &attr);
    if (!srv.srq)
        armci_die("ARMCI_Init", "ibv_create_srq (data server, %d buffers) failed: %s", srv.nbufs,
                  strerror(errno));
}

static void create_buffers(void)
{
    size_t bytes = srv.buf_size * (size_t)srv.nbufs;
    srv.bufs = xmalloc_registrable(bytes);
    srv.bufs_mr = net_reg("ARMCI_Init", srv.bufs, bytes, false);
    for (int i = 0; i < srv.nbufs; i++)
        post_buffer(i);

    size_t out_bytes = server_out_buf_size() * OUT_BUFS;
    srv.out_region = xmalloc_registrable(out_bytes);
    srv.out_mr = net_reg("ARMCI_Init", srv.out_region, out_bytes, false);
    srv.out_all = xcalloc(OUT_BUFS, sizeof(struct out_buf));
    for (int i = 0; i < OUT_BUFS; i++) {
        struct out_buf *o = &srv.out_all[i];
        o->buf = srv.out_region + (size_t)i * server_out_buf_size();
        o->lkey = srv.out_mr->lkey;
        o->next = srv.out_free;
        srv.out_free = o;
    }
}

void server_init(void)
{
    srv.nbufs = cfg.server_bufs;
    srv.buf_size = sizeof(struct ds_request) + cfg.server_buf_size;
    create_queues();
    create_buffers();
    link_listen();
    cm_server_init(srv.send_cq, srv.recv_cq);
}

/* ---- connections ---- */

struct server_conn *server_conn_create(int client)
{
    struct server_conn *sc = xcalloc(1, sizeof(*sc));
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", client);
    struct rc_qp_caps caps = {.max_send_wr = sq_depth(), .max_inline = sizeof(struct ds_reply)};
    sc->qp = rc_qp_create(srv.send_cq, srv.recv_cq, srv.srq, &caps, peer);
    rc_qp_to_init(sc->qp, peer);
    sc->client = client;
    sc->psn = rc_random_psn();
    /* A fair share of the receive buffers, at least one request, at most the cap. */
    int share = srv.nbufs / (srv.nconns + 1);
    sc->allowance = share < 1 ? 1 : share > cfg.server_credits ? cfg.server_credits : share;
    srv.allowance_total += sc->allowance;
    srv.nconns++;
    intmap_put(&srv.by_qpn, sc->qp->qp_num, sc);
    intmap_put(&srv.by_client, (uint32_t)client, sc);
    return sc;
}

void server_conn_connect(struct server_conn *sc, const struct verbs_addr *client_addr)
{
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", sc->client);
    rc_qp_to_rtr(sc->qp, client_addr, peer);
    rc_qp_to_rts(sc->qp, sc->psn, peer);
    sc->connected = true;
}

struct server_conn *server_conn_of_client(int client)
{
    return intmap_get(&srv.by_client, (uint32_t)client);
}

struct verbs_addr server_conn_addr(const struct server_conn *sc)
{
    return verbs_my_addr(sc->qp->qp_num, sc->psn);
}

int server_conn_count(void)
{
    return srv.nconns;
}

/* ---- sends ---- */

static void drain_sends(void)
{
    struct ibv_wc wc[CQ_BATCH];
    int n = ibv_poll_cq(srv.send_cq, CQ_BATCH, wc);
    if (n < 0)
        armci_die(NULL, "ibv_poll_cq (data server sends) failed: %d", n);
    for (int i = 0; i < n; i++) {
        enum wr_tag tag = wr_id_tag(wc[i].wr_id);
        if (tag == WR_TAG_UD_SEND) {
            cm_server_handle_wc(&wc[i]);
            continue;
        }
        struct server_conn *sc;
        if (tag == WR_TAG_OUTBUF) {
            struct out_buf *o = wr_id_pointer(wc[i].wr_id);
            sc = o->sc;
            o->next = srv.out_free;
            srv.out_free = o;
        } else {
            sc = wr_id_pointer(wc[i].wr_id);
        }
        sc->sq_posted--;
        srv.sends_posted--;
        if (wc[i].status != IBV_WC_SUCCESS)
            armci_die(NULL, "data server: send to client rank %d failed: %s", sc->client,
                      ibv_wc_status_str(wc[i].status));
        sc->sends_done++;
    }
}

void server_reserve_sends(struct server_conn *sc, int n)
{
    while (sc->sq_posted + n > sq_depth() || srv.sends_posted + n > srv.send_budget)
        drain_sends();
}

struct out_buf *server_out_buf_get(void)
{
    while (!srv.out_free)
        drain_sends();
    struct out_buf *o = srv.out_free;
    srv.out_free = o->next;
    return o;
}

void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad;
    sc->sq_posted++;
    srv.sends_posted++;
    int rc = ibv_post_send(sc->qp, wr, &bad);
    if (rc)
        armci_die(NULL, "data server: ibv_post_send to client rank %d failed: %s", sc->client,
                  strerror(rc));
}

/*
 * Credits returned with a reply: normally the one the request used. While
 * the server is over-committed (more allowance than buffers) it shrinks
 * clients above their fair share by returning none; when there is room it
 * grows clients below the cap by returning two.
 */
static int credits_to_return(struct server_conn *sc)
{
    int fair = srv.nbufs / (srv.nconns ? srv.nconns : 1);
    if (fair > cfg.server_credits)
        fair = cfg.server_credits;
    if (fair < 1)
        fair = 1;
    if (sc->allowance > fair && srv.allowance_total > srv.nbufs) {
        sc->allowance--;
        srv.allowance_total--;
        return 0;
    }
    if (sc->allowance < fair && srv.allowance_total < srv.nbufs) {
        sc->allowance++;
        srv.allowance_total++;
        return 2;
    }
    return 1;
}

void server_reply(struct server_conn *sc, uint64_t token, int status, int64_t value)
{
    struct ds_reply r = {
        .token = token, .value = value, .status = status, .credits = credits_to_return(sc)};
    struct ibv_sge sge = {.addr = (uintptr_t)&r, .length = sizeof(r), .lkey = 0};
    struct ibv_send_wr wr = {
        .wr_id = wr_id_make((uintptr_t)sc, WR_TAG_POINTER),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
    };
    server_reserve_sends(sc, 1);
    server_post_send(sc, &wr);
}

/* ---- the loop ---- */

static void on_request(const struct ibv_wc *wc)
{
    int index = (int)wr_id_index(wc->wr_id);
    struct server_conn *sc = intmap_get(&srv.by_qpn, wc->qp_num);
    if (wc->status != IBV_WC_SUCCESS) {
        if (wc->status != IBV_WC_WR_FLUSH_ERR)
            armci_warn("data server: receive failed: %s", ibv_wc_status_str(wc->status));
        return;
    }
    if (sc)
        handle_request(sc, (struct ds_request *)(srv.bufs + (size_t)index * srv.buf_size),
                       wc->byte_len);
    else
        armci_warn("data server: request on unknown QP %u dropped", wc->qp_num);
    post_buffer(index);
}

/* Handles what the receive CQ holds; returns how many completions there were. */
static int poll_requests(void)
{
    struct ibv_wc wc[CQ_BATCH];
    int n = ibv_poll_cq(srv.recv_cq, CQ_BATCH, wc);
    if (n < 0)
        armci_die(NULL, "ibv_poll_cq (data server) failed: %d", n);
    for (int i = 0; i < n; i++) {
        if (wr_id_tag(wc[i].wr_id) == WR_TAG_UD_RECV)
            cm_server_handle_wc(&wc[i]);
        else
            on_request(&wc[i]);
    }
    return n;
}

/* Sleeps until a completion or a local request arrives. */
static void wait_for_work(void)
{
    int rc = ibv_req_notify_cq(srv.recv_cq, 0);
    if (rc)
        armci_die(NULL, "ibv_req_notify_cq (data server) failed: %s", strerror(rc));
    if (poll_requests())
        return;
    struct pollfd fds[1 + 64];
    fds[0] = (struct pollfd){.fd = srv.channel->fd, .events = POLLIN};
    int nlink = link_pollfds(fds + 1, 64);
    int rcp = poll(fds, (nfds_t)(1 + nlink), IDLE_WAKEUP_MS);
    if (rcp <= 0)
        return;
    if (fds[0].revents & POLLIN) {
        struct ibv_cq *cq;
        void *ctx;
        if (ibv_get_cq_event(srv.channel, &cq, &ctx)) {
            if (errno != EAGAIN)
                armci_die(NULL, "ibv_get_cq_event (data server) failed: %s", strerror(errno));
        } else if (++srv.events_unacked >= 64) {
            ibv_ack_cq_events(srv.recv_cq, srv.events_unacked);
            srv.events_unacked = 0;
        }
    }
    link_handle(fds + 1, nlink);
}

static void *server_main(void *arg)
{
    double busy_until = 0;
    while (!__atomic_load_n(&srv.stop, __ATOMIC_ACQUIRE)) {
        drain_sends();
        if (poll_requests()) {
            busy_until = now_seconds() + LINGER_SECONDS;
            continue;
        }
        /* Right after work more is likely on its way: a short spin saves a sleep/wake-up. */
        if (now_seconds() < busy_until) {
            cpu_relax();
            continue;
        }
        if (cfg.server_poll) {
            struct pollfd fds[64];
            int nlink = link_pollfds(fds, 64);
            if (poll(fds, (nfds_t)nlink, 0) > 0)
                link_handle(fds, nlink);
            continue;
        }
        wait_for_work();
    }
    /* Everything received has been answered; let the replies leave. */
    while (srv.sends_posted > 0)
        drain_sends();
    return arg;
}

void server_start(void)
{
    int rc = pthread_create(&srv.thread, NULL, server_main, NULL);
    if (rc)
        armci_die("ARMCI_Init", "cannot start the data server thread: %s", strerror(rc));
    srv.running = true;
}

void server_stop(void)
{
    if (!srv.running)
        return;
    server_link_stop(); /* through the local socket, so a sleeping server wakes up */
    pthread_join(srv.thread, NULL);
    srv.running = false;
}

void server_set_stop(void)
{
    __atomic_store_n(&srv.stop, true, __ATOMIC_RELEASE);
}

void server_fini(void)
{
    struct server_conn *sc;
    INTMAP_FOR_EACH(&srv.by_qpn, sc)
    {
        char peer[48];
        snprintf(peer, sizeof(peer), "client rank %d", sc->client);
        rc_qp_destroy(sc->qp, peer);
        free(sc);
    }
    intmap_free(&srv.by_qpn);
    intmap_free(&srv.by_client);
    cm_server_fini();
    locks_fini();
    registry_fini();
    link_close();
    if (srv.events_unacked)
        ibv_ack_cq_events(srv.recv_cq, srv.events_unacked);
    verbs_destroy_srq(srv.srq, "data server");
    verbs_destroy_cq(srv.recv_cq, "data server requests");
    verbs_destroy_cq(srv.send_cq, "data server replies");
    verbs_destroy_channel(srv.channel, "data server");
    net_dereg(srv.bufs_mr);
    net_dereg(srv.out_mr);
    free(srv.bufs);
    free(srv.out_region);
    free(srv.out_all);
    srv = (struct server){0};
}
