/*
 * Server side of on-demand setup. Idempotent by construction: a request
 * for a connection that exists is answered with that connection's data
 * again (never a new QP), a message from an older attempt (epoch) is
 * ignored, and an RTU that overtook its REQ creates the connection itself.
 *
 * Closing is the client's (ondemand.c): it sends DISC once nothing of its
 * is in flight on the connection; the server destroys its end and answers
 * DISC_ACK, again for a repeated DISC (its end is gone: nothing to do but
 * answer). A server holding ARMCI_MAX_CONNECTIONS connections asks its
 * least recently active client to close (DISC_ASK) when another one comes;
 * it still accepts the newcomer, so no client ever waits on another's
 * traffic (the cap is a target for servers, a bound for clients).
 *
 * Every datagram is checked before it is used: its fields, and its sender
 * against the directory (a message claiming rank r must come from r's
 * published client UD QP). A stranger on the fabric, or a rank of the job
 * posing as another, can neither create, connect nor block a connection of
 * someone else.
 */
#include "odcm/cm_server.h"

#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/intmap.h"
#include "core/memstat.h"
#include "core/recovery_stats.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "odcm/directory.h"
#include "odcm/ud.h"
#include "verbs/atomics.h"

static struct ud_endpoint sud;
static struct cm_server_ops ops;

/*
 * The channel's receives (an MTU each, registered) grow with the clients that talk to this
 * server: two for each (a setup's REQ and RTU arrive together). The first chunk holds the
 * setups of eight at once; a datagram lost in a larger burst is retransmitted by its client.
 */
#define SERVER_RECV_FIRST      16
#define SERVER_RECV_PER_CLIENT 2

/* The manager's record of one client's connection to this server. */
struct accepted {
    int client;
    void *conn;       /* the data server's object */
    uint32_t epoch;   /* the client's attempt it belongs to */
    uint8_t protocol; /* the client's setup protocol */
    bool connected;   /* the server end is RTS */
    bool asked;       /* asked to close (DISC_ASK sent) */
};
static struct intmap by_client; /* client rank -> struct accepted */
/* Client rank -> the attempt of its last closed connection (as a pointer-sized integer).
 * A datagram of that attempt or older that arrives late (reordered or retransmitted)
 * must not bring the closed connection back: the client has moved on to a newer one. */
static struct intmap closed_epoch;
static int naccepted; /* by_client.count, readable from other threads */
static struct cm_server_stats stats;

/* Whether the server has a UD channel: for on-demand setup, and for clients whose connection
 * broke to set it up anew (static ones too). */
static bool ondemand(void)
{
    return cfg.connect == CFG_CONNECT_ONDEMAND || cfg.recovery_timeout > 0;
}

int cm_server_recv_cq_entries(void)
{
    return ondemand() ? ud_recv_cq_entries() : 0;
}

int cm_server_send_cq_entries(void)
{
    return ondemand() ? ud_send_cq_entries() : 0;
}

static void on_client_datagram(void *ctx, const struct ud_sender *from, const struct cm_msg *m);

void cm_server_init(struct endpoint *sends, struct endpoint *requests,
                    const struct cm_server_ops *server_ops)
{
    ops = *server_ops;
    if (!ondemand())
        return;
    ud_create(&sud, sends, requests, "data server", SERVER_RECV_FIRST, on_client_datagram, NULL);
    directory_attach(DIR_SERVER, &sud);
}

void cm_server_check_channel(void)
{
    if (sud.qp)
        ud_check(&sud);
}

void cm_server_fini(void)
{
    ud_destroy(&sud);
    struct accepted *a;
    INTMAP_FOR_EACH(&by_client, a)
    {
        memstat_add(MEM_CONNECTIONS, -(long)sizeof(*a));
        free(a);
    }
    intmap_free(&by_client);
    intmap_free(&closed_epoch);
    naccepted = 0;
    stats = (struct cm_server_stats){0};
}

struct cm_server_stats cm_server_stats(void)
{
    return stats;
}

int cm_server_conn_count(void)
{
    /* Called by the application thread while the server thread may accept more. */
    return __atomic_load_n(&naccepted, __ATOMIC_RELAXED);
}

/*
 * A request gets one reply, a packed get one RDMA write more: 2 entries per credit, for at most
 * 8 credits. A server answers a client's SENDs in batches (one reply per half its allowance)
 * and drains completions when the queue is full, so a larger ARMCI_SERVER_CREDITS (32 by
 * default) only waits there now and then; entries for all of it would cost every server QP
 * (odcm/report.h's model) 5.5 instead of 2.5 KiB.
 */
#define SEND_DEPTH_CREDITS 8

int cm_server_send_depth(void)
{
    return 2 * MIN(cfg.server_credits, SEND_DEPTH_CREDITS) + 8;
}

long cm_server_refused_datagrams(void)
{
    return ud_refused(&sud);
}

long cm_server_ud_restarts(void)
{
    return ud_restarts(&sud);
}

static void counted(void)
{
    __atomic_store_n(&naccepted, (int)by_client.count, __ATOMIC_RELAXED);
    ud_grow_recv(&sud, SERVER_RECV_PER_CLIENT * (int)by_client.count);
    if ((long)by_client.count > stats.peak)
        stats.peak = (long)by_client.count;
}

/* A message without a QP, to a client about its attempt `epoch`. */
static void tell(int client, enum cm_msg_type type, uint32_t epoch, uint8_t protocol)
{
    struct cm_msg m = {
        .type = (uint8_t)type,
        .protocol = protocol,
        .rank = client,
        .node = topo.my_node,
        .epoch = epoch,
    };
    struct verbs_addr to;
    if (directory_client(client, &to))  /* known: it was checked when it came */
        ud_send(&sud, client, &to, &m); /* if busy, the client's retransmission covers it */
}

void cm_server_tell_broken(int client)
{
    struct accepted *a = intmap_get(&by_client, (uint32_t)client);
    if (a && a->connected && ondemand())
        tell(client, CM_BROKEN, a->epoch, a->protocol);
}

/* At the cap: the least recently active connected client not asked yet is asked to close. */
static void ask_one_to_close(void)
{
    struct accepted *a, *lru = NULL;
    uint64_t oldest = UINT64_MAX;
    INTMAP_FOR_EACH(&by_client, a)
    {
        uint64_t t = ops.last_active(a->conn);
        if (a->connected && !a->asked && t < oldest) {
            oldest = t;
            lru = a;
        }
    }
    if (!lru)
        return;
    lru->asked = true;
    stats.asked++;
    tell(lru->client, CM_DISC_ASK, lru->epoch, lru->protocol);
}

static struct accepted *accept_new(int client, uint32_t epoch)
{
    if (cfg.max_server_connections && (int)by_client.count >= cfg.max_server_connections)
        ask_one_to_close();
    struct accepted *a = xcalloc(1, sizeof(*a));
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*a));
    *a = (struct accepted){.client = client, .conn = ops.create(client), .epoch = epoch};
    intmap_put(&by_client, (uint32_t)client, a);
    counted();
    return a;
}

/* DISC: the client's end is closed and idle; ours goes too. Answered whether or not it is
 * still there (a repeated DISC finds it gone). */
static void close_for(const struct cm_msg *m)
{
    struct accepted *a = intmap_get(&by_client, (uint32_t)m->rank);
    if (a && a->epoch == m->epoch) {
        ops.destroy(a->conn);
        intmap_remove(&by_client, (uint32_t)m->rank);
        memstat_add(MEM_CONNECTIONS, -(long)sizeof(*a));
        free(a);
        counted();
        stats.closed++;
        intmap_put(&closed_epoch, (uint32_t)m->rank, (void *)(uintptr_t)m->epoch);
    }
    tell(m->rank, CM_DISC_ACK, m->epoch, m->protocol);
}

static void accept_connect(struct accepted *a, const struct verbs_addr *client_addr)
{
    ops.connect(a->conn, client_addr);
    a->connected = true;
}

struct verbs_addr cm_server_accept_static(int client, const struct verbs_addr *client_addr,
                                          struct cm_terms *terms)
{
    struct accepted *a = accept_new(client, 0);
    accept_connect(a, client_addr);
    return ops.address(a->conn, terms);
}

uint32_t cm_server_ud_qpn(void)
{
    return sud.qp ? sud.qp->qp_num : 0;
}

static void answer(struct accepted *a, enum cm_msg_type type, uint8_t protocol)
{
    struct cm_msg m = {
        .type = (uint8_t)type,
        .protocol = protocol,
        .rank = a->client,
        .node = topo.my_node,
        .epoch = a->epoch,
    };
    a->protocol = protocol;
    struct cm_terms terms;
    m.qp = ops.address(a->conn, &terms);
    m.credits = terms.credits;
    m.gather = (uint16_t)terms.gather;
    m.resume = terms.resume;
    struct verbs_addr to;
    if (directory_client(a->client, &to))  /* known: it was checked when it came */
        ud_send(&sud, a->client, &to, &m); /* if busy, the client's retransmission covers it */
}

/* Whether m carries the client's QP: an RTU, or a serial-protocol REQ (not a DISC). */
static bool carries_client_qp(const struct cm_msg *m)
{
    return m->type == CM_RTU || (m->type == CM_REQ && m->protocol == CFG_PROTOCOL_SERIAL);
}

/* What is wrong with a client's message (before its sender is looked at), or NULL. */
static const char *invalid_request(const struct cm_msg *m)
{
    if (m->type != CM_REQ && m->type != CM_RTU && m->type != CM_DISC)
        return "not a request";
    if (m->protocol != CFG_PROTOCOL_OVERLAP && m->protocol != CFG_PROTOCOL_SERIAL)
        return "unknown protocol";
    if (m->gather != 0 || m->credits != 0 || m->resume != 0)
        return "malformed";
    /* Processes of this node connect only for device atomics (verbs/atomics.h). */
    if (m->rank < 0 || m->rank >= rt.nprocs || (topo_same_node(m->rank) && !rmw_route_loopback()))
        return "rank out of range or on this node";
    if (m->node != topo.my_node)
        return "meant for another node";
    if (m->epoch == 0)
        return "no attempt number";
    if (carries_client_qp(m))
        return NULL; /* its address is checked against the sender's port */
    static const struct verbs_addr none;
    return memcmp(&m->qp, &none, sizeof(none)) ? "malformed" : NULL;
}

/*
 * The connection of this client for this attempt, created if new; NULL if
 * stale. The sender is verified, so a different epoch is the client's own:
 * an older one is a leftover of an attempt it gave up (ignored); a newer one
 * means it gave up ours. While our end has not left INIT (no RTU yet) it has
 * served nothing, so the newer attempt takes it over. Once connected, a
 * client asks anew only when its end broke (it closes with DISC otherwise):
 * a new end replaces ours (ops.replace: the sequence space and the queued lock
 * requests carry over, the client replays what was not answered). Attempts
 * at or below the client's last closed one are late datagrams and are
 * ignored.
 */
static struct accepted *conn_for(const struct ud_sender *from, const struct cm_msg *m)
{
    struct accepted *a = intmap_get(&by_client, (uint32_t)m->rank);
    if (!a && m->epoch <= (uintptr_t)intmap_get(&closed_epoch, (uint32_t)m->rank))
        return NULL; /* a late datagram of a closed connection */
    if (!a)
        return accept_new(m->rank, m->epoch);
    if (m->epoch == a->epoch)
        return a;
    if (m->epoch < a->epoch)
        return NULL;
    if (a->connected) {
        if (m->type != CM_REQ) {
            ud_refuse(&sud, from, "a newer attempt of a rank already connected");
            return NULL;
        }
        a->conn = ops.replace(a->conn);
        a->connected = false;
        recovery_stats.replaced++;
    }
    a->epoch = m->epoch;
    return a;
}

static void replay(const struct ud_sender *from, const void *bytes, size_t len)
{
    (void)len;
    on_client_datagram(NULL, from, bytes);
}

static void on_client_datagram(void *ctx, const struct ud_sender *from, const struct cm_msg *m)
{
    if (fault_injected(FAULT_SERVER_SILENT))
        return; /* a server that never answers */
    if (m->type == CM_LOOKUP || m->type == CM_ENTRY) {
        directory_on_message(DIR_SERVER, from, m); /* an entry hands back what waited for it */
        return;
    }
    const char *bad = invalid_request(m);
    if (bad) {
        ud_refuse(&sud, from, bad);
        return;
    }
    struct verbs_addr client;
    if (!directory_client(m->rank, &client)) { /* asked of its holder meanwhile */
        directory_park(m->rank, from, m, sizeof(*m), replay);
        return;
    }
    if (!ud_sender_is(from, &client)) {
        ud_refuse(&sud, from, "not sent by the rank it names");
        return;
    }
    if (carries_client_qp(m) && !ud_qp_addr_valid(&m->qp, &client)) {
        ud_refuse(&sud, from, "the client QP it names is not on the client's port");
        return;
    }
    if (m->type == CM_DISC) {
        close_for(m);
        return;
    }
    struct accepted *a = conn_for(from, m);
    if (!a)
        return;
    if (carries_client_qp(m) && !a->connected)
        accept_connect(a, &m->qp);
    if (m->type == CM_REQ && !(m->protocol == CFG_PROTOCOL_SERIAL))
        answer(a, a->connected ? CM_ACK : CM_REP, m->protocol);
    else if (m->type == CM_REQ)
        answer(a, CM_REP, m->protocol); /* serial: REP means "I am RTS" */
    else if (m->type == CM_RTU)
        answer(a, CM_ACK, m->protocol);
}
