/* Connections, made and unmade for the connection manager (connections.h). */
#include "dataserver/connections.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/intmap.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/util.h"
#include "dataserver/credits.h"
#include "dataserver/locks.h"
#include "dataserver/answers.h"
#include "dataserver/pulls.h"
#include "dataserver/resources.h"
#include "dataserver/sends.h"
#include "dataserver/engine.h"
#include "verbs/qp_pool.h"
#include "verbs/rc_qp.h"

static struct intmap by_qpn; /* QP number -> struct server_conn */

struct server_conn *server_conn_of_qp(uint32_t qp_num)
{
    return intmap_get(&by_qpn, qp_num);
}

static void *conn_create(int client)
{
    struct server_conn *sc = xcalloc(1, sizeof(*sc));
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*sc));
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", client);
    /* A QP made ahead of need if there is one: first contact then costs RTR and RTS only. */
    struct rc_qp_caps caps = server_qp_caps();
    sc->qp = ds_res.qp_pool ? qp_pool_take(ds_res.qp_pool, &caps) : NULL;
    if (!sc->qp) {
        caps = server_qp_caps();
        sc->qp = rc_qp_create(ds_res.sends.cq, ds_res.requests.cq, ds_res.bufs.srq, &caps, peer);
        rc_qp_to_init(sc->qp, peer);
    }
    sc->max_sge = caps.max_send_sge;
    sc->client = client;
    sc->engine = engine_of(client);
    sc->psn = rc_random_psn();
#if ARMCI_MUTANT_IS(request_bufs_at_setup) /* the bug: buffers for every connection made */
    resources_fit_clients((int)by_qpn.count + 1);
#endif
    credits_join(sc);
    intmap_put(&by_qpn, sc->qp->qp_num, sc);
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
    *terms = (struct cm_terms){
        .credits = sc->allowance, .gather = sc->max_sge, .resume = engine_next(sc->engine)};
    return verbs_my_addr(sc->qp->qp_num, sc->psn);
}

static void conn_free(struct server_conn *sc)
{
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", sc->client);
    rc_qp_destroy(sc->qp, peer);
    memstat_add(MEM_CONNECTIONS, -(long)sizeof(*sc));
    free(sc);
}

/* Takes sc out of service once its sends are done (a QP in error flushes them at once). */
static void conn_retire(struct server_conn *sc)
{
    while (sc->sq_posted > 0)
        server_drain_sends();
    pulls_forget_conn(sc);
    answers_forget_conn(sc);
    intmap_remove(&by_qpn, sc->qp->qp_num);
    credits_leave(sc);
}

/* The client closed its end with nothing in flight; ours goes once its own sends are done.
 * Its sequence space stays (engine.h): its datagrams and its next connection go on from the
 * number its requests had reached. */
static void conn_destroy(void *conn)
{
    struct server_conn *sc = conn;
    conn_retire(sc);
    locks_forget_conn(sc);
    conn_free(sc);
}

/*
 * The client's end broke. Ours may still be up (the break was on its side):
 * it goes to the error state, which flushes its sends, then a new end takes
 * over the sequence space, the queued lock requests and the allowance. Answers
 * that were due on the old end are not sent: the client replays every
 * request it has no answer for.
 */
static void *conn_replace(void *conn)
{
    struct server_conn *old = conn;
    char peer[48];
    snprintf(peer, sizeof(peer), "client rank %d", old->client);
    rc_qp_to_error(old->qp, peer);
    old->broken = true;
    conn_retire(old);
    struct server_conn *sc = conn_create(old->client);
    credits_take_over(sc, old);
    locks_move_conn(old, sc);
    conn_free(old);
    return sc;
}

static uint64_t conn_last_active(const void *conn)
{
    return ((const struct server_conn *)conn)->last_served;
}

const struct cm_server_ops server_conn_ops = {.create = conn_create,
                                              .connect = conn_connect,
                                              .address = conn_address,
                                              .destroy = conn_destroy,
                                              .replace = conn_replace,
                                              .last_active = conn_last_active};

void connections_fini(void)
{
    struct server_conn *sc;
    INTMAP_FOR_EACH(&by_qpn, sc)
    conn_free(sc);
    intmap_free(&by_qpn);
    credits_fini();
    engine_fini();
}
