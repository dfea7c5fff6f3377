/*
 * Server side of on-demand setup. Idempotent by construction: a request
 * for a connection that exists is answered with that connection's data
 * again (never a new QP), a message from an older attempt (epoch) is
 * ignored, and an RTU that overtook its REQ creates the connection itself.
 */
#include "cm_server.h"

#include "../config.h"
#include "../dataserver/server.h"
#include "../error.h"
#include "../runtime.h"
#include "../topology.h"
#include "directory.h"
#include "ud.h"

static struct ud_endpoint sud;

static bool ondemand(void)
{
    return cfg.connect == CFG_CONNECT_ONDEMAND;
}

int cm_server_recv_cq_entries(void)
{
    return ondemand() ? ud_cq_entries() : 0;
}

int cm_server_send_cq_entries(void)
{
    return ondemand() ? ud_cq_entries() : 0;
}

static void on_message(void *ctx, const struct cm_msg *m);

void cm_server_init(struct endpoint *sends, struct endpoint *requests)
{
    if (ondemand())
        ud_create(&sud, sends, requests, "data server", on_message, NULL);
}

void cm_server_fini(void)
{
    ud_destroy(&sud);
}

uint32_t cm_server_ud_qpn(void)
{
    return sud.qp ? sud.qp->qp_num : 0;
}

static void answer(const struct server_conn *sc, enum cm_msg_type type, uint8_t protocol)
{
    struct cm_msg m = {
        .type = (uint8_t)type,
        .protocol = protocol,
        .rank = sc->client,
        .node = topo.my_node,
        .epoch = sc->epoch,
        .credits = sc->allowance,
        .qp = server_conn_addr(sc),
    };
    struct verbs_addr to = directory_client(sc->client);
    ud_send(&sud, sc->client, &to, &m); /* if busy, the client's retransmission covers it */
}

/* The connection of this client for this attempt, created if new; NULL if stale. */
static struct server_conn *conn_for(const struct cm_msg *m)
{
    struct server_conn *sc = server_conn_of_client(m->rank);
    if (!sc) {
        sc = server_conn_create(m->rank);
        sc->epoch = m->epoch;
        return sc;
    }
    if (m->epoch != sc->epoch) {
        /* An older attempt's leftovers; a newer one would mean a live QP torn down: refuse. */
        if (m->epoch > sc->epoch)
            armci_warn("data server: rank %d asked again (attempt %u) while connected "
                       "(attempt %u): ignored",
                       m->rank, m->epoch, sc->epoch);
        return NULL;
    }
    return sc;
}

static void on_message(void *ctx, const struct cm_msg *m)
{
    if (cfg.test_hooks & HOOK_SERVER_SILENT)
        return; /* test: a server that never answers */
    if (m->rank < 0 || m->rank >= rt.nprocs || m->node != topo.my_node || topo_same_node(m->rank))
        return;
    struct server_conn *sc = conn_for(m);
    if (!sc)
        return;
    bool carries_client_qp = m->type == CM_RTU || m->protocol == CFG_PROTOCOL_SERIAL;
    if (carries_client_qp && !sc->connected)
        server_conn_connect(sc, &m->qp);
    if (m->type == CM_REQ && !(m->protocol == CFG_PROTOCOL_SERIAL))
        answer(sc, sc->connected ? CM_ACK : CM_REP, m->protocol);
    else if (m->type == CM_REQ)
        answer(sc, CM_REP, m->protocol); /* serial: REP means "I am RTS" */
    else if (m->type == CM_RTU)
        answer(sc, CM_ACK, m->protocol);
}
