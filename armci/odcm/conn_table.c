/*
 * The connection table and the client end of every connection (see
 * conn_table.h). The connection's QP is the manager's; what the transport
 * keeps about it hangs off c->io and is asked for through cm_env.
 */
#include "odcm/conn_map.h"
#include "odcm/conn_table.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/memstat.h"
#include "core/topology.h"
#include "core/util.h"

static struct intmap conns; /* node -> struct conn */
struct cm_client_env cm_env;
static unsigned char *ever; /* [num_nodes / 8]: nodes connected to before (reopenings) */
static struct cm_stats stats;

static size_t ever_bytes(void)
{
    return (size_t)topo.num_nodes / 8 + 1;
}

void conn_table_init(const struct cm_client_env *env)
{
    cm_env = *env;
    stats = (struct cm_stats){0};
    ever = xcalloc(ever_bytes(), 1);
    memstat_add(MEM_CONNECTIONS, (long)ever_bytes());
}

static void peer_name(char *buf, size_t len, int node)
{
    snprintf(buf, len, "the data server of node %d", node);
}

struct rc_qp_caps client_conn_caps(void)
{
    return (struct rc_qp_caps){.max_send_wr = cfg.send_wqes, .max_inline = (int)cm_env.max_inline};
}

void client_conn_adopt_qp(struct conn *c, struct ibv_qp *qp, const struct rc_qp_caps *granted)
{
    c->qp = qp;
    c->psn = rc_random_psn();
    c->sq_depth = granted->max_send_wr;
    c->max_inline = (uint32_t)granted->max_inline;
    c->max_sge = granted->max_send_sge;
}

void client_conn_create_qp(struct conn *c)
{
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    struct rc_qp_caps caps = client_conn_caps();
    struct ibv_qp *qp = rc_qp_create(cm_env.cq->cq, cm_env.cq->cq, cm_env.srq, &caps, peer);
    rc_qp_to_init(qp, peer);
    client_conn_adopt_qp(c, qp, &caps);
}

void client_conn_replace_qp(struct conn *c, int extra_wrs)
{
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    struct rc_qp_caps caps = client_conn_caps();
    caps.max_send_wr = c->sq_depth + extra_wrs;
    /* Whatever the broken QP still holds completes at once, flushed: nothing more of it moves. */
    rc_qp_to_error(c->qp, peer);
    c->broken_qp = c->qp;
    c->qp = rc_qp_create(cm_env.cq->cq, cm_env.cq->cq, cm_env.srq, &caps, peer);
    rc_qp_to_init(c->qp, peer);
    c->psn = rc_random_psn();
}

void client_conn_drop_broken_qp(struct conn *c)
{
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    rc_qp_destroy(c->broken_qp, peer);
    c->broken_qp = NULL;
}

struct conn *client_conn_create(int node)
{
    struct conn *c = xcalloc(1, sizeof(*c));
    c->node = node;
    client_conn_create_qp(c);
    return c;
}

void client_conn_set_terms(struct conn *c, struct cm_terms terms)
{
    c->server_terms = terms;
    c->server_credits = terms.credits;
    c->server_gather = terms.gather;
    c->established = true;
}

void client_conn_establish(struct conn *c, const struct verbs_addr *server, struct cm_terms terms)
{
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    rc_qp_to_rtr(c->qp, server, peer);
    rc_qp_to_rts(c->qp, c->psn, peer);
    client_conn_set_terms(c, terms);
}

void client_conn_ready(struct conn *c)
{
    c->state = CONN_READY;
    c->setup_end = now_seconds();
    cm_env.on_ready(c);
}

static void client_conn_destroy(struct conn *c)
{
    if (cm_env.on_destroy)
        cm_env.on_destroy(c);
    char peer[64];
    peer_name(peer, sizeof(peer), c->node);
    rc_qp_destroy(c->qp, peer);
    rc_qp_destroy(c->broken_qp, peer);
    memstat_add(MEM_CONNECTIONS, -(long)sizeof(*c));
    free(c);
}

void conn_table_insert(struct conn *c)
{
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*c));
    intmap_put(&conns, (uint32_t)c->node, c);
    cm_env.on_insert(c);
    if ((long)conns.count > stats.peak)
        stats.peak = (long)conns.count;
    if (ever[c->node / 8] & (1u << (c->node % 8)))
        stats.reopened++;
    ever[c->node / 8] |= (unsigned char)(1u << (c->node % 8));
    conn_map_opened(c->node);
}

void conn_table_remove_closed(struct conn *c)
{
    intmap_remove(&conns, (uint32_t)c->node);
    stats.closed++;
    conn_map_closed(c->node);
    client_conn_destroy(c);
}

struct conn *conn_table_find(int node)
{
    return intmap_get(&conns, (uint32_t)node);
}

struct conn *conn_table_find_qp(const struct ibv_qp *qp)
{
    struct conn *c;
    INTMAP_FOR_EACH(&conns, c)
    if (c->qp == qp || (qp && c->broken_qp == qp))
        return c;
    return NULL;
}

int conn_table_count(void)
{
    return (int)conns.count;
}

const struct intmap *conn_table_all(void)
{
    return &conns;
}

bool conn_table_closable(const struct conn *c)
{
    return c->state == CONN_READY && !cm_env.busy(c);
}

struct conn *conn_table_least_recently_used(bool *closing, bool *lock_waiting)
{
    struct conn *c, *lru = NULL;
    *closing = *lock_waiting = false;
    INTMAP_FOR_EACH(&conns, c)
    {
        *closing |= c->state == CONN_CLOSING;
        *lock_waiting |= cm_env.waits_for_lock(c);
        if (conn_table_closable(c) && (!lru || c->last_used < lru->last_used))
            lru = c;
    }
    return lru;
}

struct cm_stats conn_table_stats(void)
{
    return stats;
}

void conn_table_count_over_cap(void)
{
    stats.over_cap++;
}

void conn_table_fini(void)
{
    struct conn *c;
    INTMAP_FOR_EACH(&conns, c)
    client_conn_destroy(c);
    intmap_free(&conns);
    free(ever);
    memstat_add(MEM_CONNECTIONS, -(long)ever_bytes());
    ever = NULL;
}
