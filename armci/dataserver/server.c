/*
 * The data server's loop, and its life: init puts the modules together
 * (resources, sends, connections, the local link), start runs the loop on
 * its own thread, stop and fini take it apart again. The loop serves the
 * requests that arrived, lets batched answers go when there is nothing more
 * to serve, and sleeps on its completion channel and local socket when idle.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/mutant.h"
#include "core/recovery_stats.h"
#include "core/util.h"
#include "core/wait_policy.h"
#include "dataserver/connections.h"
#include "dataserver/credits.h"
#include "dataserver/dgram_server.h"
#include "dataserver/handlers.h"
#include "dataserver/link.h"
#include "dataserver/linger.h"
#include "dataserver/link_server.h"
#include "dataserver/locks.h"
#include "dataserver/pulls.h"
#include "dataserver/registry.h"
#include "dataserver/answers.h"
#include "dataserver/resources.h"
#include "dataserver/sends.h"
#include "dataserver/server.h"
#include "odcm/cm_server.h"
#include "verbs/rc_qp.h"

/* While idle the server sleeps at most this long: a safety net for providers
 * that progress deferred work only when polled. */
#define IDLE_WAKEUP_MS 100

static struct {
    uint64_t served;       /* requests served so far: the clock of server_conn.last_served */
    uint64_t lost;         /* requests counted towards the test point FAULT_SERVER_LOSES */
    uint64_t lost_unlocks; /* unlocks counted towards FAULT_SERVER_LOSES_UNLOCKS */
    pthread_t thread;
    bool running;
    bool stop;
} loop;

/* The test point FAULT_SERVER_LOSES_UNLOCKS: whether a received SEND is an unlock alone. */
static bool is_unlock(const struct ds_message *m, uint32_t len)
{
    return len >= sizeof(*m) && m->op == DS_UNLOCK && !(m->flags & DS_MORE);
}

/* The test point FAULT_SERVER_BREAKS: our end breaks under the answers just sent; with
 * FAULT_SERVER_BACKLOG after requests piled up behind, which are then served on an end known
 * to be broken. */
static void break_point(struct server_conn *sc)
{
    bool backlog = fault_injected(FAULT_SERVER_BACKLOG);
    if (backlog)
        usleep(2000);
    rc_qp_to_error(sc->qp, "a test break point");
    if (backlog)
        server_end_broke(sc, "a test break point");
}

/* Serves a message received from sc, len bytes. */
static void serve_received(struct server_conn *sc, struct ds_message *m, size_t len)
{
    sc->last_served = ++loop.served;
    serve_message(sc, m, len);
    if (fault_injected(FAULT_SERVER_BREAKS) && loop.served % FAULT_BREAK_EVERY == 0)
        break_point(sc);
}

static void on_request(void *ctx, const struct ibv_wc *wc)
{
    struct server_conn *sc = server_conn_of_qp(wc->qp_num);
    if (!sc) {
        armci_warn("data server: request on unknown QP %u dropped", wc->qp_num);
        return;
    }
    /* Received means served (DESIGN.md 10.1, rule 3): on an end that broke too; only the
     * answers that cannot be sent are lost, and the client's replay finds them kept. */
#if ARMCI_MUTANT_IS(server_drops_broken)
    if (sc->broken)
        return;
#endif
    if (sc->broken)
        recovery_stats.served_broken++;
    if (!sc->requested)
        credits_first_request(sc); /* its buffers: connections that never send take none */
    struct ds_message *m = recv_pool_buffer(&ds_res.bufs, wc);
    if (fault_injected(FAULT_SERVER_LOSES) && !sc->broken && ++loop.lost % FAULT_BREAK_EVERY == 0) {
        rc_qp_to_error(sc->qp, "a test break point (a received request lost)");
        return;
    }
    if (fault_injected(FAULT_SERVER_LOSES_UNLOCKS) && !sc->broken && is_unlock(m, wc->byte_len) &&
        ++loop.lost_unlocks == FAULT_UNLOCK_LOST_AT) {
        rc_qp_to_error(sc->qp, "a test break point (a received unlock lost)");
        return;
    }
    if (pull_holds(sc)) {
        pull_park(sc, m, wc->byte_len); /* behind a read of sc's data (pulls.h) */
        return;
    }
    serve_received(sc, m, wc->byte_len);
}

/* Pulls whose reads completed are served, which gives their out buffers back; what waited
 * behind each goes on at the loop's top (finish_pulls). Also called while an out buffer is
 * waited for, in the middle of serving another request. */
static void serve_done_pulls(void)
{
    struct pull *p;
    while ((p = pull_next_done())) {
        serve_pulled(p->sc, &p->rq, p->out, p->payload, p->status);
        pull_resume(p->sc);
        pull_free(p);
    }
}

/* The loop's top: served pulls, then the messages that waited behind them, in order, until a
 * connection's next pull is in flight. */
static void finish_pulls(void)
{
    serve_done_pulls();
    struct server_conn *sc;
    while ((sc = pull_next_resumed())) {
        void *m;
        size_t len;
        while (!sc->pull && pull_unpark(sc, &m, &len)) {
            serve_received(sc, m, len);
            free(m);
        }
        serve_done_pulls();
    }
}

/* Ends the loop once it has answered what it received (a STOP on the local link). */
static void set_stop(void)
{
    __atomic_store_n(&loop.stop, true, __ATOMIC_RELEASE);
}

void server_init(void)
{
    resources_create(on_request);
    sends_init();
    sends_on_out_buf_wait(serve_done_pulls);
    pulls_init();
    registry_init(locks_forget_range);
    link_listen(set_stop);
    cm_server_init(&ds_res.sends, &ds_res.requests, &server_conn_ops);
    dgram_server_init();
    resources_create_qp_pool();
}

/* Handles what the receive CQ holds; returns how many completions there were. */
static int poll_requests(void)
{
    return endpoint_poll(&ds_res.requests);
}

/* A UD QP left in the error state by the device receives nothing, ever: looked at when idle
 * (each check asks the device at most twice a second). */
static void check_channels(void)
{
    cm_server_check_channel();
    dgram_server_check_channel();
}

/* Sleeps until a request, a local request or (with reads of client data in flight) a send
 * completion arrives. */
static void wait_for_work(void)
{
    check_channels();
    resources_trim(now_seconds());
    int nlink;
    struct pollfd *link = link_pollfds(&nlink);
    struct pollfd fds[nlink + 1];
    memcpy(fds, link, sizeof(*fds) * (size_t)nlink);
    int n = nlink;
    if (pulls_in_flight() > 0) {
        fds[n++] = endpoint_arm(&ds_res.sends);
        if (endpoint_poll(&ds_res.sends) > 0)
            return; /* one came before the arming */
    }
    if (endpoint_wait(&ds_res.requests, IDLE_WAKEUP_MS, fds, n) != 0)
        return;
    for (int i = 0; i < nlink; i++)
        link[i].revents = fds[i].revents;
    link_handle(link, nlink);
    if (n > nlink)
        endpoint_disarm(&ds_res.sends, &fds[nlink]);
}

static void *server_main(void *arg)
{
    struct linger linger;
    linger_init(&linger, cfg.server_spin_us * 1e-6, wait_yields);
    while (!__atomic_load_n(&loop.stop, __ATOMIC_ACQUIRE)) {
        server_drain_sends();
        finish_pulls();
        if (poll_requests()) {
            linger_work(&linger, now_seconds());
            continue;
        }
        /* Nothing more to serve right now: whatever answers wait go out. */
        server_answers_flush();
        /* Right after work more is likely on its way: polling a while saves a sleep and a
         * wake-up (linger.h; yielding the core, if the client that sends it may need it). */
        if (linger_poll_on(&linger, now_seconds())) {
            wait_pause();
            continue;
        }
        if (cfg.server_poll) {
            check_channels();
            int nlink;
            struct pollfd *fds = link_pollfds(&nlink);
            if (poll(fds, (nfds_t)nlink, 0) > 0)
                link_handle(fds, nlink);
            wait_pause();
            continue;
        }
        wait_for_work();
    }
    /* Everything received has been answered (a pull once its read is done); let the replies
     * leave. */
    while (pulls_in_flight() > 0) {
        server_drain_sends();
        finish_pulls();
    }
    server_answers_flush();
    while (server_sends_in_flight() > 0)
        server_drain_sends();
    return arg;
}

void server_start(void)
{
    int rc = pthread_create(&loop.thread, NULL, server_main, NULL);
    if (rc)
        armci_die("ARMCI_Init", "cannot start the data server thread: %s", strerror(rc));
    loop.running = true;
}

void server_stop(void)
{
    if (!loop.running)
        return;
    server_link_stop(); /* through the local socket, so a sleeping server wakes up */
    pthread_join(loop.thread, NULL);
    loop.running = false;
}

void server_fini(void)
{
    connections_fini();
    answers_fini();
    dgram_server_fini();
    cm_server_fini();
    locks_fini();
    registry_fini();
    link_close();
    resources_destroy();
    loop.served = 0;
    loop.stop = false;
}
