/* The data server: resources, connections, the progress loop and replies. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/memstat.h"
#include "verbs/memory.h"
#include "odcm/cm_server.h"
#include "verbs/qp_pool.h"
#include "verbs/rc_qp.h"
#include "dataserver/link.h"
#include "core/util.h"
#include "dataserver/server_internal.h"

struct server srv;

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

static struct rc_qp_caps server_qp_caps(void)
{
    return (struct rc_qp_caps){.max_send_wr = sq_depth(), .max_inline = sizeof(struct ds_reply)};
}

static void on_request(void *ctx, const struct ibv_wc *wc);
static const struct cm_server_ops conn_ops;
static void on_reply_sent(void *ctx, const struct ibv_wc *wc);
static void on_out_buf_sent(void *ctx, const struct ibv_wc *wc);
static void on_pulled(void *ctx, const struct ibv_wc *wc);

static void create_out_bufs(void)
{
    size_t out_bytes = server_out_buf_size() * OUT_BUFS;
    srv.out_region = xmalloc_registrable(out_bytes);
    srv.out_mr = net_reg("ARMCI_Init", srv.out_region, out_bytes, false);
    srv.out_all = xcalloc(OUT_BUFS, sizeof(struct out_buf));
    memstat_add(MEM_BUF_SERVER, (long)(out_bytes + OUT_BUFS * sizeof(struct out_buf)));
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
    int nbufs = cfg.server_bufs;
    srv.send_budget = 2 * nbufs + 64;
    endpoint_create(&srv.requests, "data server requests", nbufs + cm_server_recv_cq_entries() + 16,
                    true);
    endpoint_create(&srv.sends, "data server sends", srv.send_budget + cm_server_send_cq_entries(),
                    false);
    endpoint_on(&srv.sends, WR_TAG_POINTER, on_reply_sent, NULL);
    endpoint_on(&srv.sends, WR_TAG_OUTBUF, on_out_buf_sent, NULL);
    endpoint_on(&srv.sends, WR_TAG_PULL, on_pulled, NULL);
    recv_pool_create(&srv.bufs, "data server request buffers", nbufs,
                     sizeof(struct ds_message) + cfg.server_buf_size, vdev.pd, &srv.requests,
                     WR_TAG_RECV, on_request, NULL);
    create_out_bufs();
    link_listen();
    cm_server_init(&srv.sends, &srv.requests, &conn_ops);
    if (cfg.connect == CFG_CONNECT_ONDEMAND && cfg.qp_pool > 0) {
        struct rc_qp_caps caps = server_qp_caps();
        srv.pool = qp_pool_create("data server", srv.sends.cq, srv.requests.cq, srv.bufs.srq, &caps,
                                  cfg.qp_pool, 1);
    }
}

/* ---- connections ---- */

/* The connection manager makes connections through these (cm_server_ops). */
static void *server_conn_create(int client)
{
    struct server_conn *sc = xcalloc(1, sizeof(*sc));
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*sc));
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", client);
    /* A QP made ahead of need if there is one: first contact then costs RTR and RTS only. */
    struct rc_qp_caps caps = server_qp_caps();
    sc->qp = srv.pool ? qp_pool_take(srv.pool, &caps) : NULL;
    if (!sc->qp) {
        caps = server_qp_caps();
        sc->qp = rc_qp_create(srv.sends.cq, srv.requests.cq, srv.bufs.srq, &caps, peer);
        rc_qp_to_init(sc->qp, peer);
    }
    sc->max_sge = caps.max_send_sge;
    sc->client = client;
    sc->psn = rc_random_psn();
    /* A fair share of the receive buffers, at least one request, at most the cap. */
    int share = srv.bufs.count / (srv.nconns + 1);
    sc->allowance = share < 1 ? 1 : share > cfg.server_credits ? cfg.server_credits : share;
    srv.allowance_total += sc->allowance;
    srv.nconns++;
    intmap_put(&srv.by_qpn, sc->qp->qp_num, sc);
    return sc;
}

static void conn_connect(void *conn, const struct verbs_addr *client_addr)
{
    struct server_conn *sc = conn;
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", sc->client);
    rc_qp_to_rtr(sc->qp, client_addr, peer);
    rc_qp_to_rts(sc->qp, sc->psn, peer);
}

static struct verbs_addr conn_address(const void *conn, struct cm_terms *terms)
{
    const struct server_conn *sc = conn;
    *terms = (struct cm_terms){.credits = sc->allowance, .gather = sc->max_sge};
    return verbs_my_addr(sc->qp->qp_num, sc->psn);
}

static void remove_from_due(const struct server_conn *sc);
static void drain_sends(void);

static void server_conn_free(struct server_conn *sc)
{
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", sc->client);
    rc_qp_destroy(sc->qp, peer);
    memstat_add(MEM_CONNECTIONS, -(long)sizeof(*sc));
    free(sc);
}

/* The client closed its end with nothing in flight; ours goes once its own sends are done. */
static void server_conn_destroy(void *conn)
{
    struct server_conn *sc = conn;
    while (sc->sq_posted > 0)
        drain_sends();
    remove_from_due(sc);
    locks_forget_conn(sc);
    intmap_remove(&srv.by_qpn, sc->qp->qp_num);
    srv.allowance_total -= sc->allowance;
    srv.nconns--;
    server_conn_free(sc);
}

static uint64_t conn_last_active(const void *conn)
{
    return ((const struct server_conn *)conn)->last_served;
}

static const struct cm_server_ops conn_ops = {.create = server_conn_create,
                                              .connect = conn_connect,
                                              .address = conn_address,
                                              .destroy = server_conn_destroy,
                                              .last_active = conn_last_active};

/* ---- sends ---- */

/*
 * A failed send means the client's QP refused what the client itself asked
 * for (e.g. a packed get's reply address with a bad rkey): the connection
 * is now in error and the client sees that on its side. It costs that
 * client its connection, never the server or its other clients.
 */
static void send_done(struct server_conn *sc, const struct ibv_wc *wc)
{
    sc->sq_posted--;
    srv.sends_posted--;
    if (wc->status == IBV_WC_SUCCESS) {
        sc->sends_done++;
        return;
    }
    if (!sc->broken)
        armci_warn("data server: connection of client rank %d failed (%s): its requests are "
                   "no longer served",
                   sc->client, ibv_wc_status_str(wc->status));
    sc->broken = true;
}

static void on_reply_sent(void *ctx, const struct ibv_wc *wc)
{
    send_done(wr_id_pointer(wc->wr_id), wc);
}

static void on_out_buf_sent(void *ctx, const struct ibv_wc *wc)
{
    struct out_buf *o = wr_id_pointer(wc->wr_id);
    o->next = srv.out_free;
    srv.out_free = o;
    send_done(o->sc, wc);
}

static void drain_sends(void)
{
    endpoint_poll(&srv.sends);
}

/* One RDMA read of client data (server_pull): in flight until its completion says how it went. */
struct pull {
    struct server_conn *sc;
    bool done;
    int status; /* enum ibv_wc_status */
};

static void on_pulled(void *ctx, const struct ibv_wc *wc)
{
    struct pull *p = wr_id_pointer(wc->wr_id);
    p->done = true;
    p->status = wc->status;
    send_done(p->sc, wc);
}

int server_pull(struct server_conn *sc, const struct ibv_sge *into, int n, uint64_t raddr,
                uint32_t rkey)
{
    if (sc->broken)
        return EPIPE;
    struct pull p = {.sc = sc};
    struct ibv_send_wr wr = {
        .wr_id = wr_id_make((uintptr_t)&p, WR_TAG_PULL),
        .sg_list = (struct ibv_sge *)into,
        .num_sge = n,
        .opcode = IBV_WR_RDMA_READ,
        .send_flags = IBV_SEND_SIGNALED,
        .wr = {.rdma = {.remote_addr = raddr, .rkey = rkey}},
    };
    server_reserve_sends(sc, 2); /* the read and the answer */
    server_post_send(sc, &wr);
    if (sc->broken)
        return EPIPE;
    while (!p.done)
        drain_sends();
    return p.status == IBV_WC_SUCCESS ? 0 : EFAULT;
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
    int rc = ibv_post_send(sc->qp, wr, &bad);
    if (rc == 0) {
        sc->sq_posted++;
        srv.sends_posted++;
        return;
    }
    /* A QP in error may refuse new work outright: the same as a failed completion. */
    if (!sc->broken)
        armci_warn("data server: ibv_post_send to client rank %d failed: %s", sc->client,
                   strerror(rc));
    sc->broken = true;
    if (wr_id_tag(wr->wr_id) == WR_TAG_OUTBUF) {
        struct out_buf *o = wr_id_pointer(wr->wr_id);
        o->next = srv.out_free;
        srv.out_free = o;
    }
}

/*
 * Credits returned with a reply: normally the one the message used. While
 * the server is over-committed (more allowance than buffers) it shrinks
 * clients above their fair share by returning none; when there is room it
 * grows clients below the cap by returning two.
 */
static int credits_to_return(struct server_conn *sc)
{
    int nbufs = srv.bufs.count;
    int fair = nbufs / (srv.nconns ? srv.nconns : 1);
    if (fair > cfg.server_credits)
        fair = cfg.server_credits;
    if (fair < 1)
        fair = 1;
    if (sc->allowance > fair && srv.allowance_total > nbufs) {
        sc->allowance--;
        srv.allowance_total--;
        return 0;
    }
    if (sc->allowance < fair && srv.allowance_total < nbufs) {
        sc->allowance++;
        srv.allowance_total++;
        return 2;
    }
    return 1;
}

static void send_reply(struct server_conn *sc, const struct ds_reply *r)
{
    if (sc->broken)
        return; /* nobody to answer: the QP is in error */
    struct ibv_sge sge = {.addr = (uintptr_t)r, .length = sizeof(*r), .lkey = 0};
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

/* Connections with answers waiting (sc->on_due_list). */
static struct server_conn **due;
static int ndue, capdue;

/*
 * Answers waiting on sc go out when this many have gathered: half the
 * client's allowance, so that it gets credits back while the other half of
 * its requests are still being served. An idle server sends the rest.
 */
static uint32_t answers_per_reply(const struct server_conn *sc)
{
    return sc->allowance >= 2 ? (uint32_t)sc->allowance / 2 : 1;
}

static void send_due(struct server_conn *sc)
{
    if (!sc->answers_due)
        return;
    struct ds_reply r = {.token = sc->last_due,
                         .status = DS_OK,
                         .credits = sc->credits_due,
                         .answers = sc->answers_due};
    sc->answers_due = 0;
    sc->credits_due = 0;
    send_reply(sc, &r);
}

void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait)
{
    sc->credits_due += credits_to_return(sc);
    sc->answers_due++;
    sc->last_due = token;
    if (may_wait && sc->answers_due < answers_per_reply(sc)) {
        if (!sc->on_due_list) {
            if (ndue == capdue) {
                capdue = capdue ? 2 * capdue : 16;
                due = xrealloc(due, sizeof(*due) * (size_t)capdue);
            }
            due[ndue++] = sc;
            sc->on_due_list = true;
        }
        return;
    }
    struct ds_reply r = {.token = token,
                         .value = value,
                         .status = status,
                         .credits = sc->credits_due,
                         .answers = sc->answers_due};
    sc->answers_due = 0;
    sc->credits_due = 0;
    send_reply(sc, &r);
}

void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued)
{
    struct ds_reply r = {.token = token,
                         .status = status,
                         .credits = queued ? 0 : credits_to_return(sc),
                         .answers = 0};
    send_reply(sc, &r);
}

void server_lock_queued(struct server_conn *sc, uint64_t token)
{
    struct ds_reply r = {
        .token = token, .status = DS_QUEUED, .credits = credits_to_return(sc), .answers = 0};
    send_reply(sc, &r);
}

static void remove_from_due(const struct server_conn *sc)
{
    if (!sc->on_due_list)
        return;
    for (int i = 0; i < ndue; i++) {
        if (due[i] == sc) {
            due[i] = due[--ndue];
            return;
        }
    }
}

void server_answers_flush(void)
{
    for (int i = 0; i < ndue; i++) {
        due[i]->on_due_list = false;
        send_due(due[i]);
    }
    ndue = 0;
}

/* ---- the loop ---- */

static void on_request(void *ctx, const struct ibv_wc *wc)
{
    struct server_conn *sc = intmap_get(&srv.by_qpn, wc->qp_num);
    if (!sc) {
        armci_warn("data server: request on unknown QP %u dropped", wc->qp_num);
        return;
    }
    if (sc->broken)
        return;
    sc->last_served = ++srv.served;
    serve_message(sc, recv_pool_buffer(&srv.bufs, wc), wc->byte_len);
}

/* Handles what the receive CQ holds; returns how many completions there were. */
static int poll_requests(void)
{
    return endpoint_poll(&srv.requests);
}

/* Sleeps until a completion or a local request arrives. */
static void wait_for_work(void)
{
    int nlink;
    struct pollfd *fds = link_pollfds(&nlink);
    if (endpoint_wait(&srv.requests, IDLE_WAKEUP_MS, fds, nlink) == 0)
        link_handle(fds, nlink);
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
        /* Nothing more to serve right now: whatever answers wait go out. */
        server_answers_flush();
        /* Right after work more is likely on its way: a short spin saves a sleep/wake-up. */
        if (now_seconds() < busy_until) {
            cpu_relax();
            continue;
        }
        if (cfg.server_poll) {
            int nlink;
            struct pollfd *fds = link_pollfds(&nlink);
            if (poll(fds, (nfds_t)nlink, 0) > 0)
                link_handle(fds, nlink);
            continue;
        }
        wait_for_work();
    }
    /* Everything received has been answered; let the replies leave. */
    server_answers_flush();
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
    server_conn_free(sc);
    intmap_free(&srv.by_qpn);
    qp_pool_destroy(srv.pool);
    free(due);
    due = NULL;
    ndue = capdue = 0;
    cm_server_fini();
    locks_fini();
    registry_fini();
    link_close();
    recv_pool_destroy(&srv.bufs);
    endpoint_destroy(&srv.requests);
    endpoint_destroy(&srv.sends);
    net_dereg(srv.out_mr);
    if (srv.out_region)
        memstat_add(MEM_BUF_SERVER,
                    -(long)(server_out_buf_size() * OUT_BUFS + OUT_BUFS * sizeof(struct out_buf)));
    free(srv.out_region);
    free(srv.out_all);
    srv = (struct server){0};
}
