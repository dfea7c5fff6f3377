/*
 * On-demand connections, client side. The first operation towards a node
 * starts the setup; operations issued meanwhile queue on the connection.
 *
 * Overlap protocol (ODCM paper Fig. 4), the default:
 *   client: REQ -> create QP, INIT -> RTU(my QP) ... REP -> RTR, RTS ... ACK
 *   server: REQ -> create QP, INIT -> REP(its QP)   RTU -> RTR, RTS -> ACK
 * The expensive QP creation happens on both sides at once, and the server
 * goes back to its loop between REQ and RTU. The client's QP comes from a
 * pool made ahead of need (verbs/qp_pool.h, ARMCI_QP_POOL); when the pool
 * is empty, background threads make one while the REQs are in flight, so a
 * process reaching many nodes at once creates its QPs in parallel instead
 * of one after the other (the RTU goes out when the QP is there).
 * Serial protocol (Fig. 3), for comparison:
 *   client: create QP, INIT -> REQ(my QP) ... REP -> RTR, RTS
 *   server: REQ -> create QP, INIT, RTR, RTS -> REP(its QP)
 *
 * Closing (ARMCI_MAX_CONNECTIONS; cm.c decides which and when): the client sends DISC for an idle
 * connection and destroys its QP when the server answers DISC_ACK; the
 * connection is CLOSING meanwhile (nobody issues on it) and is opened anew,
 * with a newer attempt number, when it is needed again. A server at its cap
 * may ask a client to close (DISC_ASK): it closes once that connection is idle.
 *
 * Reliability lives in the progress engine: every unanswered step is
 * retransmitted with exponential back-off; the server is idempotent; stale
 * epochs are ignored; no answer within ARMCI_CONNECT_TIMEOUT ends the job
 * with an error naming the node.
 *
 * An answer about node n is believed only if it is well formed and came
 * from node n's data-server UD QP (the directory's), and it must name a
 * server QP on that server's port: nobody else can point a connection of
 * ours at another QP.
 */
#include "odcm/ondemand.h"
#include "common/grow.h"
#include "core/mutant.h"

#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/retransmit.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "odcm/cm_server.h"
#include "odcm/conn_table.h"
#include "odcm/directory.h"
#include "odcm/report.h"
#include "odcm/ud.h"
#include "verbs/atomics.h"
#include "verbs/qp_pool.h"

/* Back-off stops doubling at 100 ms; a slow device's smoothed setup time may stretch that,
 * within retransmit_limit (core/retransmit.h). */
#define MAX_RTO 0.1

static struct ud_endpoint cud;
static struct qp_pool *pool;     /* overlap protocol: the client's QPs, made ahead */
static int awaiting_qp;          /* connections waiting for a QP from the pool */
static int establishing;         /* connections whose QP's transitions are under way */
static int asks_pending;         /* connections their server asked us to close */
static struct conn **connecting; /* connections being set up */
static int nconnecting, capconnecting;
static uint32_t next_epoch = 1;
/* Smoothed setup time of connections that needed no retransmission (Karn): later
 * attempts start their timer there, so a slow device does not cause spurious resends. */
static double srtt;
/* Karn: after a retransmission, new attempts start from the backed-off timeout until a
 * setup completes without one (a loaded host answers late; do not flood it). */
static double backed_off_rto;
/* When progress last looked at the timers: a setup that ended after a longer time away
 * (TIMER_AWAY_SECONDS) measured our absence, not the server, and is no sample. */
static double progressed_at;

static void on_server_datagram(void *ctx, const struct ud_sender *from, const struct cm_msg *m);
static void finish_if_ready(struct conn *c);

/*
 * The channel's receives (an MTU each, registered) grow with the setups and closes under way:
 * each expects two answers at most at once (REP and ACK, or DISC_ACK). The first chunk, room
 * for four, also holds the unasked ones (DISC_ASK, BROKEN): one lost only delays a close, or
 * the broken connection is found by its own completions.
 */
#define CLIENT_RECV_FIRST     8
#define CLIENT_RECV_PER_SETUP 2

/* Background threads: one per QP asked for at once, up to a few. */
#define POOL_THREADS 4

void ondemand_init(void)
{
    ud_create(&cud, cm_env.cq, cm_env.cq, "client", CLIENT_RECV_FIRST, on_server_datagram, NULL);
    directory_attach(DIR_CLIENTS, &cud);
    directory_publish(ud_addr(&cud), topo_is_master() ? cm_server_ud_qpn() : 0);
    /* Static mode has the channel only to set up anew connections that broke. */
    if (cfg.protocol == CFG_PROTOCOL_OVERLAP && cfg.connect == CFG_CONNECT_ONDEMAND) {
        struct rc_qp_caps caps = client_conn_caps();
        pool = qp_pool_create("client", cm_env.cq->cq, cm_env.cq->cq, cm_env.srq, &caps,
                              cfg.qp_pool, POOL_THREADS);
    }
}

int ondemand_wait_fd(void)
{
    return pool && (awaiting_qp > 0 || establishing > 0) ? qp_pool_fd(pool) : -1;
}

void ondemand_fini(void)
{
    qp_pool_destroy(pool);
    pool = NULL;
    awaiting_qp = establishing = asks_pending = 0;
    ud_destroy(&cud);
    free(connecting);
    connecting = NULL;
    nconnecting = capconnecting = 0;
    next_epoch = 1;
    srtt = 0;
    backed_off_rto = 0;
    directory_fini();
}

static void send_to_server(struct conn *c, enum cm_msg_type type, bool with_qp)
{
    struct cm_msg m = {
        .type = (uint8_t)type,
        .protocol = (uint8_t)cfg.protocol,
        .rank = rt.me,
        .node = c->node,
        .epoch = c->epoch,
    };
    if (with_qp)
        m.qp = verbs_my_addr(c->qp->qp_num, c->psn);
    struct verbs_addr to;
    if (!directory_server(c->node, &to))
        return; /* asked of its holder: sent when the answer comes (learned), or retried */
    /* A busy send queue is like a lost datagram: the retry timer covers it. */
    ud_send(&cud, c->node, &to, &m);
}

/* The QP from the pool, if one is ready; then the server may have it (RTU). `asked`:
 * the connection asked the pool for one when it started. */
static bool take_pooled_qp(struct conn *c, bool asked)
{
    struct rc_qp_caps granted;
    struct ibv_qp *qp = asked ? qp_pool_take_asked(pool, &granted) : qp_pool_take(pool, &granted);
    if (!qp)
        return false;
    client_conn_adopt_qp(c, qp, &granted);
    send_to_server(c, CM_RTU, true);
    return true;
}

/* Sends whatever the server has not acknowledged yet. */
static void send_pending_steps(struct conn *c)
{
    if (c->state == CONN_CLOSING) {
        send_to_server(c, CM_DISC, false);
        return;
    }
    if (cfg.protocol == CFG_PROTOCOL_SERIAL) {
        send_to_server(c, CM_REQ, true);
        return;
    }
    if (!c->have_server_addr)
        send_to_server(c, CM_REQ, false);
    if (c->qp)
        send_to_server(c, CM_RTU, true);
}

/* The silence that ends a setup: the connect timeout, or the recovery timeout if shorter. */
static double setup_timeout(void)
{
    double timeout = cfg.connect_timeout;
    if (cfg.recovery_timeout > 0)
        timeout = MIN(timeout, cfg.recovery_timeout);
    return timeout;
}

static double rto_ceiling(void)
{
    return retransmit_limit(RETRANSMIT_CEILING, setup_timeout(), cfg.connect_rto);
}

/*
 * Starts the timers of a setup or a close. A connection is in the list once at most: one
 * that breaks while it closes is set up anew from there (recovery), and a second entry
 * would outlive it once it closed (its retransmissions then read a freed record).
 */
static void watch(struct conn *c)
{
    c->setup_begin = c->silent_since = progressed_at = now_seconds();
    c->retries = 0;
    c->rto = MIN(MAX(MAX(cfg.connect_rto, 2 * srtt), backed_off_rto), rto_ceiling());
    c->next_retry = c->setup_begin + c->rto;
    if (c->watched)
        return;
    c->watched = true;
    GROW_FOR_ONE(connecting, nconnecting, capconnecting, 8, xrealloc);
    connecting[nconnecting++] = c;
#if !ARMCI_MUTANT_IS(client_channel_unfit)
    ud_grow_recv(&cud, CLIENT_RECV_PER_SETUP * nconnecting);
#endif
}

static void unwatch(struct conn *c)
{
    if (!c->watched)
        return;
    c->watched = false;
    SWAP_REMOVE(connecting, nconnecting, c);
}

struct conn *ondemand_start(int node)
{
    struct conn *c = xcalloc(1, sizeof(*c));
    c->node = node;
    c->state = CONN_CONNECTING;
    c->epoch = next_epoch++;
    watch(c);

    if (cfg.protocol == CFG_PROTOCOL_OVERLAP) {
        /* Ask first, so the server creates its end while ours is made. */
        send_to_server(c, CM_REQ, false);
        if (!take_pooled_qp(c, false)) {
            qp_pool_ask(pool); /* a background thread makes it: progress picks it up */
            awaiting_qp++;
        }
    } else {
        client_conn_create_qp(c);
        send_to_server(c, CM_REQ, true);
    }
    return c;
}

void ondemand_reconnect(struct conn *c, int extra_wrs)
{
    client_conn_replace_qp(c, extra_wrs);
    c->state = CONN_CONNECTING;
    c->recovering = true;
    c->epoch = next_epoch++;
    c->have_server_addr = c->server_ready = c->established = false;
    watch(c);
    /* The new QP is there already: the REQ (the server replaces its end) and, overlapping,
     * the RTU that names it. */
    bool serial = cfg.protocol == CFG_PROTOCOL_SERIAL;
    send_to_server(c, CM_REQ, serial);
    if (!serial)
        send_to_server(c, CM_RTU, true);
}

/*
 * Our QP towards the server's. When several connections are being set up at
 * once, the pool's threads make the transitions in parallel; a single one
 * goes faster here than through a thread's wake-up and ours.
 */
static void establish(struct conn *c)
{
    if (!pool || nconnecting < 2) {
        client_conn_establish(c, &c->server_addr, c->server_terms);
        finish_if_ready(c); /* the server may have said it is ready already */
        return;
    }
    c->establishing = true;
    establishing++;
    qp_pool_connect(pool, c->qp, &c->server_addr, c->psn, c);
}

void ondemand_close(struct conn *c)
{
    c->state = CONN_CLOSING;
    send_to_server(c, CM_DISC, false);
    watch(c);
}

/* The server destroyed its end: ours goes, and the node may be connected anew. */
static void closed(struct conn *c)
{
    unwatch(c);
    asks_pending -= c->close_asked;
    conn_table_remove_closed(c);
}

static void finish_if_ready(struct conn *c)
{
    /* Ours is RTS once established; the server's once it ACKed. */
    bool ready = c->established && (cfg.protocol == CFG_PROTOCOL_SERIAL || c->server_ready);
    if (!ready || c->state == CONN_READY)
        return;
    if (c->recovering) {
        client_conn_ready(c); /* the transport replays what was not confirmed */
        c->recovering = false;
        client_conn_drop_broken_qp(c);
        unwatch(c);
        return;
    }
    client_conn_ready(c);
    report_setup_done(c);
    if (retransmit_may_sample(c->retries + 1, progressed_at, now_seconds())) {
        double t = c->setup_end - c->setup_begin;
        srtt = srtt > 0 ? 0.75 * srtt + 0.25 * t : t;
        backed_off_rto = 0;
    }
    unwatch(c);
}

/* Whether a message is about closing (it carries no QP and no terms). */
static bool about_closing(const struct cm_msg *m)
{
    return m->type == CM_DISC_ACK || m->type == CM_DISC_ASK || m->type == CM_BROKEN;
}

/* What is wrong with a server's answer (before its sender is looked at), or NULL. */
static const char *invalid_answer(const struct cm_msg *m)
{
    if (m->type != CM_REP && m->type != CM_ACK && !about_closing(m))
        return "not an answer";
    if (m->rank != rt.me)
        return "meant for another rank";
    if (m->node < 0 || m->node >= topo.num_nodes ||
        (m->node == topo.my_node && !rmw_route_loopback()))
        return "node out of range";
    if (m->epoch == 0 && m->type != CM_BROKEN) /* a static connection's attempt is 0 */
        return "no attempt number";
    if (about_closing(m)) {
        static const struct verbs_addr none;
        bool empty =
            !m->gather && !m->credits && !m->resume && !memcmp(&m->qp, &none, sizeof(none));
        return empty ? NULL : "malformed";
    }
    if (m->protocol != cfg.protocol || m->gather < 1 || m->gather > CM_GATHER_MAX)
        return "malformed";
    if (m->credits <= 0 || m->credits > CM_CREDITS_MAX)
        return "credits out of range";
    return NULL;
}

/* A closing message of the server of c's node (sender checked). */
static void on_closing(struct conn *c, const struct cm_msg *m)
{
    if (!c || m->epoch != c->epoch)
        return; /* an older connection's: long gone */
    if (m->type == CM_BROKEN) {
        if (c->state == CONN_READY)
            cm_env.on_broken(c); /* its server's end broke: ours is set up anew */
        return;
    }
    if (m->type == CM_DISC_ACK && c->state == CONN_CLOSING)
        closed(c);
    else if (m->type == CM_DISC_ASK && c->state == CONN_READY && !c->close_asked) {
        c->close_asked = true; /* closed by the progress engine once idle */
        asks_pending++;
    }
}

/* The directory learned where node's data server is: its setups and closes go now. */
static void learned(int node)
{
    for (int i = 0; i < nconnecting; i++)
        if (connecting[i]->node == node)
            send_pending_steps(connecting[i]);
}

static void on_server_datagram(void *ctx, const struct ud_sender *from, const struct cm_msg *m)
{
    if (m->type == CM_ENTRY || m->type == CM_LOOKUP) {
        int rank = directory_on_message(DIR_CLIENTS, from, m);
        if (rank >= 0 && rank == topo_node_master(topo_node_of(rank)))
            learned(topo_node_of(rank));
        return;
    }
    const char *bad = invalid_answer(m);
    if (bad) {
        ud_refuse(&cud, from, bad);
        return;
    }
    struct verbs_addr server;
    if (!directory_known_server(m->node, &server) || !ud_sender_is(from, &server)) {
        ud_refuse(&cud, from, "not sent by the data server it names");
        return;
    }
    struct conn *c = conn_table_find(m->node);
    if (about_closing(m)) {
        on_closing(c, m);
        return;
    }
    if (!ud_qp_addr_valid(&m->qp, &server)) {
        ud_refuse(&cud, from, "the server QP it names is not on the server's port");
        return;
    }
    /* Stale (an older attempt) or for a connection long established: nothing to do. */
    if (!c || m->epoch != c->epoch || c->state != CONN_CONNECTING)
        return;
    if ((m->type == CM_REP || m->type == CM_ACK) && !c->have_server_addr) {
        c->server_addr = m->qp;
        c->server_terms = (struct cm_terms){m->credits, m->gather, m->resume};
        c->have_server_addr = true;
        if (c->qp) /* else once its QP is there */
            establish(c);
    }
    if (m->type == CM_ACK)
        c->server_ready = true;
    finish_if_ready(c);
}

/* Connections whose QP the pool has made meanwhile: RTU, and RTR/RTS if the server answered. */
static int adopt_ready_qps(void)
{
    int adopted = 0;
    for (int i = 0; i < nconnecting && awaiting_qp > 0; i++) {
        struct conn *c = connecting[i];
        if (c->qp || !take_pooled_qp(c, true))
            continue;
        awaiting_qp--;
        adopted++;
        if (c->have_server_addr)
            establish(c);
    }
    return adopted;
}

/* Connections whose RTR/RTS the pool's threads have made: ready once the server is. */
static int collect_established(void)
{
    int collected = 0;
    struct conn *c;
    while (establishing > 0 && (c = qp_pool_connected(pool))) {
        establishing--;
        collected++;
        c->establishing = false;
        client_conn_set_terms(c, c->server_terms);
        finish_if_ready(c);
    }
    return collected;
}

/* A broken connection's server answered nothing within the recovery timeout. */
static void node_lost(const struct conn *c)
{
    char node[160];
    topo_describe_node(c->node, node, sizeof(node));
    armci_die(NULL,
              "%s is lost: its connection broke and its data server answered nothing for "
              "ARMCI_RECOVERY_TIMEOUT=%g s (%d retransmissions): the host is down, hung or "
              "unreachable",
              node, cfg.recovery_timeout, c->retries);
}

int ondemand_progress(void)
{
    if (!nconnecting)
        return 0;
    int events = 0;
    if (awaiting_qp > 0)
        events += adopt_ready_qps();
    if (establishing > 0)
        events += collect_established();
    if (!nconnecting)
        return events;
    double now = now_seconds();
    progressed_at = now;
    for (int i = 0; i < nconnecting; i++) {
        struct conn *c = connecting[i];
        if (now < c->next_retry)
            continue;
        if (retransmit_was_away(c->next_retry, now))
            c->silent_since = now; /* we were away: an answer lost meanwhile is asked again */
        if (c->recovering && now - c->silent_since > cfg.recovery_timeout)
            node_lost(c);
        if (!c->recovering && now - c->silent_since > cfg.connect_timeout)
            armci_die(NULL,
                      "no answer from the data server of node %d (rank %d) within "
                      "ARMCI_CONNECT_TIMEOUT=%g s after %d retransmissions: is the node alive?",
                      c->node, topo_node_master(c->node), cfg.connect_timeout, c->retries);
        ud_check(&cud); /* a silent server, or our own QP deaf: asks the device */
#if ARMCI_MUTANT_IS(ud_retransmission_dropped)
        if (0)
#endif
            send_pending_steps(c);
        c->retries++;
        report_retransmission();
        c->rto =
            retransmit_backoff(c->rto, MAX(MAX_RTO, 4 * srtt), setup_timeout(), cfg.connect_rto);
        backed_off_rto = MAX(backed_off_rto, c->rto);
        c->next_retry = now + c->rto;
    }
    return events;
}

double ondemand_next_deadline(void)
{
    if (!nconnecting)
        return -1;
    double now = now_seconds(), soonest = 1e9;
    for (int i = 0; i < nconnecting; i++)
        soonest = MIN(soonest, connecting[i]->next_retry - now);
    return soonest < 0 ? 0 : soonest;
}

int ondemand_close_asks(void)
{
    return asks_pending;
}

long ondemand_refused(void)
{
    return ud_refused(&cud);
}

long ondemand_ud_restarts(void)
{
    return ud_restarts(&cud);
}
