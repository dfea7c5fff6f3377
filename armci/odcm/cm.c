/*
 * The connection manager's front door (cm.h). It owns the policy: which
 * protocol fills the connection table (ARMCI_CONNECT: static, all at init,
 * cm_static.c; or on-demand, at first use, ondemand.c) and when a
 * connection is closed to stay under ARMCI_MAX_CONNECTIONS. The table and
 * the connections themselves are conn_table.c's; the report is report.c's.
 * Nothing below calls back up here.
 */
#include "odcm/cm.h"

#include "core/config.h"
#include "core/error.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "odcm/cm_static.h"
#include "odcm/conn_map.h"
#include "odcm/conn_table.h"
#include "odcm/ondemand.h"
#include "odcm/report.h"
#include "odcm/ud.h"

static uint64_t use_clock; /* stamps connections' last use */

/*
 * At the cap: starts closing the least recently used idle connection. Room
 * comes when its server agrees (ondemand.c); until then, or while none is
 * idle, false (one close at a time: a second one would not make room
 * sooner). One exception: while a thread waits on a connection for a lock,
 * the lock's holder may be another of our threads that needs a connection
 * to unlock it; waiting for room could wait forever, so the cap gives way
 * (and is restored as connections go idle, shrink_to_cap).
 */
static bool make_room(void)
{
    bool closing, lock_waiting;
    struct conn *lru = conn_table_least_recently_used(&closing, &lock_waiting);
    if (closing)
        return false;
    if (lru) {
        ondemand_close(lru);
        return false;
    }
    if (lock_waiting) {
        conn_table_count_over_cap();
        return true;
    }
    return false;
}

/* Starts closing one connection its server asked to close, if one is idle. */
static void close_if_asked(void)
{
    struct conn *c;
    INTMAP_FOR_EACH(conn_table_all(), c)
    {
        if (c->close_asked && conn_table_closable(c)) {
            ondemand_close(c);
            return; /* one at a time, like make_room */
        }
    }
}

/* Over the cap (it gave way to a lock wait): closes the least recently used idle one. */
static void shrink_to_cap(void)
{
    if (!cfg.max_connections || conn_table_count() <= cfg.max_connections)
        return;
    bool closing, lock_waiting;
    struct conn *lru = conn_table_least_recently_used(&closing, &lock_waiting);
    if (lru && !closing)
        ondemand_close(lru);
}

/* Whether this process has the UD channel: for on-demand setup, and to set up anew a
 * connection that broke (static ones too). */
static bool has_ud_channel(void)
{
    return cfg.connect == CFG_CONNECT_ONDEMAND || cfg.recovery_timeout > 0;
}

void cm_init(const struct cm_client_env *env)
{
    conn_table_init(env);
    use_clock = 0;
    if (cfg.max_connections && cfg.connect == CFG_CONNECT_STATIC && rt.me == 0)
        armci_warn("ARMCI_MAX_CONNECTIONS=%d has no effect with ARMCI_CONNECT=static",
                   cfg.max_connections);
    report_init();
    conn_map_init(topo.num_nodes);
    if (has_ud_channel())
        ondemand_init();
    if (cfg.connect == CFG_CONNECT_STATIC)
        cm_static_connect_all();
}

void cm_conn_reconnect(struct conn *c, int extra_wrs)
{
    ondemand_reconnect(c, extra_wrs);
}

struct conn *cm_conn_start(int node)
{
    struct conn *c = conn_table_find(node);
    if (c) {
        if (c->state == CONN_CLOSING)
            return NULL;
        c->last_used = ++use_clock;
        return c;
    }
    if (cfg.connect == CFG_CONNECT_STATIC)
        armci_die(NULL, "no connection to node %d in static mode", node);
    if (cfg.max_connections && conn_table_count() >= cfg.max_connections && !make_room())
        return NULL;
    c = ondemand_start(node);
    c->last_used = ++use_clock;
    conn_table_insert(c);
    return c;
}

struct conn *cm_conn_if_exists(int node)
{
    return conn_table_find(node);
}

struct conn *cm_conn_by_qp(const struct ibv_qp *qp)
{
    return conn_table_find_qp(qp);
}

int *cm_conn_nodes(int *n)
{
    const struct intmap *all = conn_table_all();
    int *nodes = xmalloc(sizeof(int) * (all->count ? all->count : 1));
    struct conn *c;
    *n = 0;
    INTMAP_FOR_EACH(all, c)
    nodes[(*n)++] = c->node;
    return nodes;
}

int cm_conn_count(void)
{
    return conn_table_count();
}

struct cm_stats cm_stats(void)
{
    return conn_table_stats();
}

int cm_client_cq_entries(void)
{
    return has_ud_channel() ? ud_send_cq_entries() + ud_recv_cq_entries() : 0;
}

long cm_retransmissions(void)
{
    return report_retransmission_count();
}

long cm_refused_datagrams(void)
{
    return has_ud_channel() ? ondemand_refused() : 0;
}

long cm_ud_restarts(void)
{
    return has_ud_channel() ? ondemand_ud_restarts() : 0;
}

int cm_progress(void)
{
    if (!has_ud_channel())
        return 0;
    if (cfg.connect == CFG_CONNECT_STATIC)
        return ondemand_progress(); /* connections set up anew after a break */
    if (ondemand_close_asks())
        close_if_asked();
    shrink_to_cap();
    return ondemand_progress();
}

int cm_wait_fd(void)
{
    return has_ud_channel() ? ondemand_wait_fd() : -1;
}

double cm_next_deadline(void)
{
    return has_ud_channel() ? ondemand_next_deadline() : -1;
}

void cm_fini(void)
{
    report_connections(conn_table_all(), conn_table_stats());
    conn_table_fini();
    conn_map_fini();
    if (has_ud_channel())
        ondemand_fini();
}
