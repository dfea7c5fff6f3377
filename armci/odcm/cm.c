/*
 * The connection table and the client end of every connection. Which
 * protocol fills the table is chosen by ARMCI_CONNECT: static (all at
 * init) or on-demand (first use; see ondemand.c).
 */
#include "odcm/cm.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/error.h"
#include "core/intmap.h"
#include "core/memstat.h"
#include "core/util.h"
#include "odcm/cm_internal.h"
#include "odcm/ondemand.h"
#include "verbs/rc_qp.h"
#include "odcm/report.h"
#include "odcm/ud.h"

static struct intmap conns; /* node -> struct conn */
struct cm_client_env cm_env;

static void peer_name(char *buf, size_t len, int node)
{
    snprintf(buf, len, "the data server of node %d", node);
}

struct rc_qp_caps conn_caps(void)
{
    return (struct rc_qp_caps){.max_send_wr = cfg.send_wqes, .max_inline = (int)cm_env.max_inline};
}

void conn_adopt_qp(struct conn *c, struct ibv_qp *qp, const struct rc_qp_caps *granted)
{
    c->qp = qp;
    c->psn = rc_random_psn();
    c->sq_depth = granted->max_send_wr;
    c->max_inline = (uint32_t)granted->max_inline;
    c->max_sge = granted->max_send_sge;
}

void conn_create_qp(struct conn *c)
{
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    struct rc_qp_caps caps = conn_caps();
    struct ibv_qp *qp = rc_qp_create(cm_env.cq->cq, cm_env.cq->cq, cm_env.srq, &caps, peer);
    rc_qp_to_init(qp, peer);
    conn_adopt_qp(c, qp, &caps);
}

struct conn *conn_create(int node)
{
    struct conn *c = xcalloc(1, sizeof(*c));
    c->node = node;
    conn_create_qp(c);
    return c;
}

void conn_set_terms(struct conn *c, struct cm_terms terms)
{
    c->credits = terms.credits;
    c->server_gather = terms.gather;
    c->established = true;
}

void conn_establish(struct conn *c, const struct verbs_addr *server, struct cm_terms terms)
{
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    rc_qp_to_rtr(c->qp, server, peer);
    rc_qp_to_rts(c->qp, c->psn, peer);
    conn_set_terms(c, terms);
}

void conn_ready(struct conn *c)
{
    c->state = CONN_READY;
    c->setup_end = now_seconds();
    cm_env.on_ready(c);
}

void conn_destroy(struct conn *c)
{
    if (cm_env.on_destroy)
        cm_env.on_destroy(c);
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    rc_qp_destroy(c->qp, peer);
    memstat_add(MEM_CONNECTIONS, -(long)sizeof(*c));
    free(c);
}

void cm_table_put(struct conn *c)
{
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*c));
    intmap_put(&conns, (uint32_t)c->node, c);
}

struct conn *cm_conn_if_exists(int node)
{
    return intmap_get(&conns, (uint32_t)node);
}

struct conn *cm_conn_by_qp(const struct ibv_qp *qp)
{
    struct conn *c;
    INTMAP_FOR_EACH(&conns, c)
    if (c->qp == qp)
        return c;
    return NULL;
}

int cm_client_cq_entries(void)
{
    return cfg.connect == CFG_CONNECT_STATIC ? 0 : ud_send_cq_entries() + ud_recv_cq_entries();
}

void cm_init(const struct cm_client_env *env)
{
    cm_env = *env;
    report_init();
    if (cfg.connect == CFG_CONNECT_STATIC)
        cm_static_connect_all();
    else
        ondemand_init();
}

struct conn *cm_conn_start(int node)
{
    struct conn *c = intmap_get(&conns, (uint32_t)node);
    if (c)
        return c;
    if (cfg.connect == CFG_CONNECT_STATIC)
        armci_die(NULL, "no connection to node %d in static mode", node);
    c = ondemand_start(node);
    cm_table_put(c);
    return c;
}

int *cm_conn_nodes(int *n)
{
    int *nodes = xmalloc(sizeof(int) * (conns.count ? conns.count : 1));
    struct conn *c;
    *n = 0;
    INTMAP_FOR_EACH(&conns, c)
    nodes[(*n)++] = c->node;
    return nodes;
}

int cm_conn_count(void)
{
    return (int)conns.count;
}

long cm_retransmissions(void)
{
    return report_retransmission_count();
}

long cm_refused_datagrams(void)
{
    return cfg.connect == CFG_CONNECT_ONDEMAND ? ondemand_refused() : 0;
}

int cm_progress(void)
{
    return cfg.connect == CFG_CONNECT_ONDEMAND ? ondemand_progress() : 0;
}

int cm_wait_fd(void)
{
    return cfg.connect == CFG_CONNECT_ONDEMAND ? ondemand_wait_fd() : -1;
}

double cm_next_deadline(void)
{
    return cfg.connect == CFG_CONNECT_ONDEMAND ? ondemand_next_deadline() : -1;
}

void cm_fini(void)
{
    report_connections(&conns);
    struct conn *c;
    INTMAP_FOR_EACH(&conns, c)
    conn_destroy(c);
    intmap_free(&conns);
    if (cfg.connect == CFG_CONNECT_ONDEMAND)
        ondemand_fini();
}
