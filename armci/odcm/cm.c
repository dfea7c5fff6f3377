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
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "odcm/cm_internal.h"
#include "odcm/ondemand.h"
#include "verbs/rc_qp.h"
#include "odcm/report.h"
#include "odcm/ud.h"

static struct intmap conns; /* node -> struct conn */
struct cm_client_env cm_env;
static uint64_t use_clock;  /* stamps connections' last use */
static unsigned char *ever; /* [num_nodes / 8]: nodes connected to before (reopenings) */
static struct cm_stats stats;

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

void cm_table_insert(struct conn *c)
{
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*c));
    intmap_put(&conns, (uint32_t)c->node, c);
    cm_env.on_insert(c);
    if ((long)conns.count > stats.peak)
        stats.peak = (long)conns.count;
}

void cm_conn_closed(struct conn *c)
{
    intmap_remove(&conns, (uint32_t)c->node);
    stats.closed++;
    conn_destroy(c);
}

struct cm_stats cm_stats(void)
{
    return stats;
}

/* Whether c may be closed now: ready, and nothing of ours on it, in flight or about to be. */
static bool closable(const struct conn *c)
{
    return c->state == CONN_READY && !cm_env.busy(c);
}

/* The least recently used connection that may be closed now, NULL if none; *closing tells
 * whether one is closing already. */
static struct conn *least_recently_used(bool *closing, bool *lock_waiting)
{
    struct conn *c, *lru = NULL;
    *closing = *lock_waiting = false;
    INTMAP_FOR_EACH(&conns, c)
    {
        *closing |= c->state == CONN_CLOSING;
        *lock_waiting |= cm_env.waits_for_lock(c);
        if (closable(c) && (!lru || c->last_used < lru->last_used))
            lru = c;
    }
    return lru;
}

/*
 * At the cap: starts closing the least recently used idle connection. Room
 * comes when its server agrees (ondemand.c); until then, or while none is
 * idle, false (one close at a time: a second one would not make room
 * sooner). One exception: while a thread waits on a connection for a lock,
 * the lock's holder may be another of our threads that needs a connection
 * to unlock it; waiting for room could wait forever, so the cap gives way
 * (and is restored as connections go idle, cm_shrink_to_cap).
 */
static bool make_room(void)
{
    bool closing, lock_waiting;
    struct conn *lru = least_recently_used(&closing, &lock_waiting);
    if (closing)
        return false;
    if (lru) {
        ondemand_close(lru);
        return false;
    }
    if (lock_waiting) {
        stats.over_cap++;
        return true;
    }
    return false;
}

void cm_close_if_asked(void)
{
    struct conn *c;
    INTMAP_FOR_EACH(&conns, c)
    {
        if (c->close_asked && closable(c)) {
            ondemand_close(c);
            return; /* one at a time, like make_room */
        }
    }
}

void cm_shrink_to_cap(void)
{
    if (!cfg.max_connections || (int)conns.count <= cfg.max_connections)
        return;
    bool closing, lock_waiting;
    struct conn *lru = least_recently_used(&closing, &lock_waiting);
    if (lru && !closing)
        ondemand_close(lru);
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
    stats = (struct cm_stats){0};
    use_clock = 0;
    ever = xcalloc((size_t)topo.num_nodes / 8 + 1, 1);
    memstat_add(MEM_CONNECTIONS, topo.num_nodes / 8 + 1);
    if (cfg.max_connections && cfg.connect == CFG_CONNECT_STATIC && rt.me == 0)
        armci_warn("ARMCI_MAX_CONNECTIONS=%d has no effect with ARMCI_CONNECT=static",
                   cfg.max_connections);
    report_init();
    if (cfg.connect == CFG_CONNECT_STATIC)
        cm_static_connect_all();
    else
        ondemand_init();
}

struct conn *cm_conn_start(int node)
{
    struct conn *c = intmap_get(&conns, (uint32_t)node);
    if (c) {
        if (c->state == CONN_CLOSING)
            return NULL;
        c->last_used = ++use_clock;
        return c;
    }
    if (cfg.connect == CFG_CONNECT_STATIC)
        armci_die(NULL, "no connection to node %d in static mode", node);
    if (cfg.max_connections && (int)conns.count >= cfg.max_connections && !make_room())
        return NULL;
    c = ondemand_start(node);
    c->last_used = ++use_clock;
    cm_table_insert(c);
    if (ever[node / 8] & (1u << (node % 8)))
        stats.reopened++;
    ever[node / 8] |= (unsigned char)(1u << (node % 8));
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
    free(ever);
    memstat_add(MEM_CONNECTIONS, -(topo.num_nodes / 8 + 1));
    ever = NULL;
    if (cfg.connect == CFG_CONNECT_ONDEMAND)
        ondemand_fini();
}
