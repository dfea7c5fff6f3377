/*
 * Fuzz target `ud`: the UD connection messages, both ends. The real
 * receiving code (odcm/ud_datagram.c: length, sender, GRH), the server's
 * handler and state machine (odcm/cm_server.c) and the client's
 * (odcm/ondemand.c) run in one process that is rank 2 of 8, the master of
 * node 1 of 4 (two ranks a node). Test doubles stand in for the verbs:
 * datagrams are handed to ud_deliver with a work completion the harness
 * makes; what would be sent, QPs created, connected or made ready is
 * recorded and checked.
 *
 * Input: byte 0 sets the world (bit 0: RoCE, addresses by GID; bit 1: the
 * serial protocol). Then events, each starting with a byte e:
 *   e % 4 == 0  a datagram to the data server's UD QP
 *   e % 4 == 1  a datagram to the client's UD QP
 *       [u8 sender][u8 flags][u8 len] ([u32 qpn][u16 lid][16 gid] if sender
 *       is 255) [len bytes]. sender < 8: rank's client UD QP; 8..11: node's
 *       server UD QP; other values: another QP on the port of one of those
 *       (sender % 12). flags bit 0: a GRH, bit 1: a RoCEv2 IPv4 GRH, bit 2:
 *       byte_len without the 40 bytes of GRH space.
 *   e % 4 == 2  [u8 node] the client starts connecting to node % 4, or closing the
 *               connection if it is ready (as ARMCI_MAX_CONNECTIONS does)
 *   e % 4 == 3  every retransmission timer expires
 *
 * Checked: a server connection is created only for, and connected only to,
 * the rank whose published client UD QP sent the datagram (never twice); a
 * client connection is established only with what its node's published
 * data-server UD QP sent, once, with sane credits and a QP on that server's
 * port; a connection is closed, at either end, only on what the true peer
 * sent (DISC from the client, DISC_ACK from its node's server); every
 * datagram sent goes to the directory address of the peer it is about; a
 * datagram never ends the job.
 */
#include <stdarg.h>
#include <string.h>

#include "core/config.h"
#include "core/recovery_stats.h"
#include "core/error.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "fuzz.h"
#include "odcm/cm_server.h"
#include "odcm/conn_table.h"
#include "odcm/directory.h"
#include "odcm/ondemand.h"
#include "odcm/report.h"
#include "odcm/ud.h"
#include "verbs/atomics.h"
#include "verbs/qp_pool.h"

#define NPROCS FUZZ_UD_NPROCS
#define NNODES FUZZ_UD_NODES
#define ME     FUZZ_UD_ME

struct config cfg;
struct recovery_stats recovery_stats;
struct runtime rt = {.me = ME, .nprocs = NPROCS, .job_id = "fuzz"};
struct verbs_device vdev;
/* No loopback connections: nobody connects to its own node (the invariants below). */
enum rmw_route rmw_route = RMW_ROUTE_SERVER;
/* The client's environment: a CQ (never polled here) for its pool's QPs. */
static struct endpoint fake_client_cq;
/* Only the node's own server may say a connection of ours broke. */
static void client_on_broken(struct conn *c);
struct cm_client_env cm_env = {.cq = &fake_client_cq, .on_broken = client_on_broken};
static bool verbose; /* FUZZ_VERBOSE=1: what each input did (to check a corpus) */

static int node_of[NPROCS] = {0, 0, 1, 1, 2, 2, 3, 3};
static int local_of[NPROCS] = {0, 1, 0, 1, 0, 1, 0, 1};
static int node_first[NNODES + 1] = {0, 2, 4, 6, 8};
static int node_ranks[NPROCS] = {0, 1, 2, 3, 4, 5, 6, 7};
struct topology topo = {.num_nodes = NNODES,
                        .my_node = 1,
                        .my_local = 0,
                        .node_of = node_of,
                        .local_of = local_of,
                        .node_first = node_first,
                        .node_ranks = node_ranks};

/* ---- runtime doubles ---- */

void armci_die(const char *call, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    FUZZ_CHECK(0, "a datagram ended the job: %s: %s", call ? call : "", msg);
    abort();
}

void armci_warn(const char *fmt, ...)
{
    (void)fmt;
}

void *xmalloc(size_t size)
{
    void *p = malloc(size);
    FUZZ_CHECK(p, "out of memory");
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    FUZZ_CHECK(p, "out of memory");
    return p;
}

void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size);
    FUZZ_CHECK(p, "out of memory");
    return p;
}

/* ---- the directory: one LID (InfiniBand) or GID (RoCE) per node, as on real hosts ---- */

static struct verbs_addr port_of_node(int node)
{
    struct verbs_addr a = {0};
    fuzz_ud_port(node, vdev.use_grh, &a.lid, a.gid);
    return a;
}

/* Every entry is known here: the lookups themselves are directory.c's, tested by the
 * internode suites; these fuzz what the channels do with the messages. */
bool directory_client(int rank, struct verbs_addr *out)
{
    FUZZ_CHECK(rank >= 0 && rank < NPROCS, "directory_client(%d)", rank);
    *out = port_of_node(node_of[rank]);
    out->qpn = FUZZ_UD_CLIENT_QPN(rank);
    return true;
}

bool directory_server(int node, struct verbs_addr *out)
{
    FUZZ_CHECK(node >= 0 && node < NNODES, "directory_server(%d)", node);
    *out = port_of_node(node);
    out->qpn = FUZZ_UD_SERVER_QPN(node);
    return true;
}

bool directory_known_server(int node, struct verbs_addr *out)
{
    return directory_server(node, out);
}

void directory_attach(enum dir_side side, struct ud_endpoint *via)
{
    (void)side;
    (void)via;
}

void directory_park(int rank, const struct ud_sender *from, const void *bytes, size_t len,
                    dir_replay_fn replay)
{
    (void)rank, (void)from, (void)bytes, (void)len, (void)replay;
    FUZZ_CHECK(0, "a datagram parked although every entry is known");
}

int directory_on_message(enum dir_side side, const struct ud_sender *from, const struct cm_msg *m)
{
    (void)side, (void)from, (void)m;
    return -1;
}

static struct verbs_addr client_addr(int rank)
{
    struct verbs_addr a;
    directory_client(rank, &a);
    return a;
}

static struct verbs_addr server_addr(int node)
{
    struct verbs_addr a;
    directory_server(node, &a);
    return a;
}

void directory_publish(struct verbs_addr client_ud, uint32_t server_ud_qpn)
{
    (void)server_ud_qpn;
    FUZZ_CHECK(client_ud.qpn == FUZZ_UD_CLIENT_QPN(ME), "published a foreign address");
}

void directory_fini(void)
{
}

struct verbs_addr verbs_my_addr(uint32_t qpn, uint32_t psn)
{
    struct verbs_addr a = port_of_node(topo.my_node);
    a.qpn = qpn;
    a.psn = psn;
    return a;
}

static bool same_addr(const struct verbs_addr *a, const struct verbs_addr *b)
{
    return a->qpn == b->qpn && a->lid == b->lid && !memcmp(a->gid, b->gid, sizeof(a->gid));
}

static bool same_port(const struct verbs_addr *a, const struct verbs_addr *b)
{
    return a->lid == b->lid && !memcmp(a->gid, b->gid, sizeof(a->gid));
}

/* ---- the UD endpoints ---- */

static struct ud_endpoint *server_ud, *client_ud;

void ud_create(struct ud_endpoint *u, struct endpoint *send_ep, struct endpoint *recv_ep,
               const char *who, int nrecv, cm_msg_fn on_message, void *ctx)
{
    (void)send_ep;
    (void)recv_ep;
    (void)nrecv;
    *u = (struct ud_endpoint){.who = who, .on_message = on_message, .ctx = ctx};
    if (!strcmp(who, "data server"))
        server_ud = u;
    else
        client_ud = u;
}

int ud_send_cq_entries(void)
{
    return 16;
}

int ud_recv_cq_entries(void)
{
    return 64;
}

/* The model delivers every datagram: it has no receive buffers to run out of. */
void ud_grow_recv(struct ud_endpoint *u, int want)
{
    (void)u;
    (void)want;
}

void ud_destroy(struct ud_endpoint *u)
{
    *u = (struct ud_endpoint){0};
}

/* The model's QP never fails. */
void ud_check(struct ud_endpoint *u)
{
    (void)u;
}

struct verbs_addr ud_addr(const struct ud_endpoint *u)
{
    (void)u;
    struct verbs_addr a;
    directory_client(ME, &a);
    return a;
}

bool ud_send(struct ud_endpoint *u, int peer_key, const struct verbs_addr *to,
             const struct cm_msg *m)
{
    if (u == server_ud) {
        struct verbs_addr want;
        directory_client(peer_key, &want);
        bool terms = m->type == CM_REP || m->type == CM_ACK;
        bool closing = m->type == CM_DISC_ACK || m->type == CM_DISC_ASK;
        FUZZ_CHECK(same_addr(to, &want) && m->rank == peer_key && m->node == topo.my_node &&
                       ((terms && m->credits > 0) || (closing && m->credits == 0)),
                   "the server sent type %d about rank %d to QP 0x%x", m->type, m->rank, to->qpn);
    } else {
        FUZZ_CHECK(u == client_ud, "a send on an unknown endpoint");
        struct verbs_addr want = server_addr(peer_key);
        FUZZ_CHECK(same_addr(to, &want) && m->rank == ME && m->node == peer_key &&
                       (m->type == CM_REQ || m->type == CM_RTU || m->type == CM_DISC) &&
                       m->epoch > 0,
                   "the client sent type %d about node %d to QP 0x%x", m->type, m->node, to->qpn);
    }
    return true;
}

/* ---- who really sent the datagram being delivered (the oracle's own view) ---- */

static struct {
    bool active;
    uint32_t qpn;
    uint16_t lid;
    bool has_gid; /* what the wire carried, whatever the receiver makes of it */
    uint8_t gid[16];
} truth;

static bool truly_from(const struct verbs_addr *a)
{
    if (!truth.active || truth.qpn != a->qpn)
        return false;
    if (vdev.use_grh)
        return truth.has_gid && !memcmp(truth.gid, a->gid, sizeof(a->gid));
    return truth.lid == a->lid;
}

/* ---- the data server's side of a connection ---- */

struct fake_server_conn {
    int client;
    bool connected;
};
static struct fake_server_conn *server_conns[NPROCS];

static void *server_create(int client)
{
    FUZZ_CHECK(client >= 0 && client < NPROCS && node_of[client] != topo.my_node,
               "server connection for rank %d", client);
    struct verbs_addr from = client_addr(client);
    FUZZ_CHECK(truly_from(&from), "a connection for rank %d, not asked by rank %d", client, client);
    FUZZ_CHECK(!server_conns[client], "a second connection for rank %d", client);
    struct fake_server_conn *sc = xcalloc(1, sizeof(*sc));
    if (verbose)
        printf("  server: connection for rank %d\n", client);
    sc->client = client;
    server_conns[client] = sc;
    return sc;
}

static void server_connect(void *conn, const struct verbs_addr *client_qp)
{
    struct fake_server_conn *sc = conn;
    struct verbs_addr from = client_addr(sc->client);
    FUZZ_CHECK(server_conns[sc->client] == sc && !sc->connected, "rank %d connected twice",
               sc->client);
    FUZZ_CHECK(truly_from(&from), "rank %d's connection connected by someone else", sc->client);
    FUZZ_CHECK(same_port(client_qp, &from) && client_qp->qpn && client_qp->qpn <= CM_QPN_MASK,
               "rank %d's connection connected to a QP elsewhere", sc->client);
    sc->connected = true;
    if (verbose)
        printf("  server: rank %d connected\n", sc->client);
}

static struct verbs_addr server_address(const void *conn, struct cm_terms *terms)
{
    const struct fake_server_conn *sc = conn;
    *terms = (struct cm_terms){.credits = 8, .gather = 16};
    return verbs_my_addr(0x3000 + (uint32_t)sc->client, 0x456);
}

static void server_destroy(void *conn)
{
    struct fake_server_conn *sc = conn;
    struct verbs_addr from = client_addr(sc->client);
    FUZZ_CHECK(server_conns[sc->client] == sc, "a connection destroyed twice");
    FUZZ_CHECK(truly_from(&from), "rank %d's connection closed by someone else", sc->client);
    if (verbose)
        printf("  server: rank %d closed\n", sc->client);
    server_conns[sc->client] = NULL;
    free(sc);
}

/* A connected client's new attempt: only the client itself replaces its connection. */
static void *server_replace(void *conn)
{
    struct fake_server_conn *sc = conn;
    struct verbs_addr from = client_addr(sc->client);
    FUZZ_CHECK(server_conns[sc->client] == sc && sc->connected, "rank %d replaced unconnected",
               sc->client);
    FUZZ_CHECK(truly_from(&from), "rank %d's connection replaced by someone else", sc->client);
    if (verbose)
        printf("  server: rank %d replaced\n", sc->client);
    sc->connected = false;
    return sc;
}

static uint64_t server_last_active(const void *conn)
{
    return (uint64_t)((const struct fake_server_conn *)conn)->client;
}

static const struct cm_server_ops server_ops = {.create = server_create,
                                                .connect = server_connect,
                                                .address = server_address,
                                                .destroy = server_destroy,
                                                .replace = server_replace,
                                                .last_active = server_last_active};

/* ---- the client's connections ---- */

static struct conn *conns[NNODES];
static struct ibv_qp fake_qps[NNODES];
static bool established[NNODES];

struct conn *conn_table_find(int node)
{
    return node >= 0 && node < NNODES ? conns[node] : NULL;
}

void conn_table_remove_closed(struct conn *c)
{
    struct verbs_addr from = server_addr(c->node);
    FUZZ_CHECK(conns[c->node] == c && c->state == CONN_CLOSING, "node %d closed twice", c->node);
    FUZZ_CHECK(truly_from(&from), "node %d's connection closed by someone else", c->node);
    if (verbose)
        printf("  client: node %d closed\n", c->node);
    conns[c->node] = NULL;
    established[c->node] = false;
    free(c);
}

/* What cm.c does before ondemand_progress: close one connection its server asked to close. */
static void close_if_asked(void)
{
    for (int n = 0; n < NNODES; n++) {
        if (conns[n] && conns[n]->close_asked && conns[n]->state == CONN_READY) {
            ondemand_close(conns[n]);
            return;
        }
    }
}

/* The client's QP pool: ready every other time, so that the harness also walks the wait. */
static struct ibv_qp pool_qps[64];
static unsigned pool_taken, pool_asked;

struct qp_pool *qp_pool_create(const char *who, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
                               struct ibv_srq *srq, struct rc_qp_caps *caps, int keep, int threads)
{
    (void)who, (void)send_cq, (void)recv_cq, (void)srq, (void)caps, (void)keep, (void)threads;
    return (struct qp_pool *)pool_qps;
}

void qp_pool_destroy(struct qp_pool *p)
{
    (void)p;
}

struct ibv_qp *qp_pool_take(struct qp_pool *p, struct rc_qp_caps *granted)
{
    (void)p;
    if (pool_asked++ % 2 == 0)
        return NULL;
    struct ibv_qp *qp = &pool_qps[pool_taken++ % 64];
    *qp = (struct ibv_qp){.qp_num = 0x5000 + pool_taken};
    *granted = (struct rc_qp_caps){.max_send_wr = 64, .max_inline = 128, .max_send_sge = 8};
    return qp;
}

struct ibv_qp *qp_pool_take_asked(struct qp_pool *p, struct rc_qp_caps *granted)
{
    return qp_pool_take(p, granted);
}

void qp_pool_ask(struct qp_pool *p)
{
    (void)p;
}

/* Transitions finish at once here: the tags wait for qp_pool_connected. */
static void *connected_tags[64];
static int nconnected;

void qp_pool_connect(struct qp_pool *p, struct ibv_qp *qp, const struct verbs_addr *remote,
                     uint32_t my_psn, void *tag)
{
    (void)p, (void)my_psn;
    struct conn *c = tag;
    struct verbs_addr from = server_addr(c->node);
    /* From a datagram's handler its sender must be that server; from the progress engine (a
     * QP the pool made after the server had answered) no datagram is being handled, and the
     * address below is the one that answer carried. */
    FUZZ_CHECK(c->qp == qp && (!truth.active || truly_from(&from)),
               "node %d's QP moved for someone else", c->node);
    FUZZ_CHECK(same_port(remote, &from) && remote->qpn && remote->qpn <= CM_QPN_MASK,
               "node %d's connection pointed at a QP elsewhere", c->node);
    FUZZ_CHECK(nconnected < 64, "too many transitions under way");
    connected_tags[nconnected++] = tag;
}

void *qp_pool_connected(struct qp_pool *p)
{
    (void)p;
    return nconnected ? connected_tags[--nconnected] : NULL;
}

int qp_pool_fd(const struct qp_pool *p)
{
    (void)p;
    return -1;
}

struct rc_qp_caps client_conn_caps(void)
{
    return (struct rc_qp_caps){.max_send_wr = 64, .max_inline = 128};
}

void client_conn_adopt_qp(struct conn *c, struct ibv_qp *qp, const struct rc_qp_caps *granted)
{
    FUZZ_CHECK(!c->qp && qp, "a second QP for node %d", c->node);
    c->qp = qp;
    c->psn = 0x789;
    c->sq_depth = granted->max_send_wr;
}

void client_conn_create_qp(struct conn *c)
{
    FUZZ_CHECK(c->node >= 0 && c->node < NNODES && c->node != topo.my_node && !c->qp,
               "a QP for node %d", c->node);
    fake_qps[c->node] = (struct ibv_qp){.qp_num = 0x4000 + (uint32_t)c->node};
    c->qp = &fake_qps[c->node];
    c->psn = 0x789;
}

/* Connections here never break: recovery is the transport's to start. */
void client_conn_replace_qp(struct conn *c, int extra_wrs)
{
    (void)extra_wrs;
    FUZZ_CHECK(false, "node %d's QP replaced", c->node);
}

void client_conn_drop_broken_qp(struct conn *c)
{
    FUZZ_CHECK(false, "node %d's broken QP dropped", c->node);
}

static void client_on_broken(struct conn *c)
{
    struct verbs_addr from = server_addr(c->node);
    FUZZ_CHECK(truly_from(&from), "node %d's connection called broken by someone else", c->node);
    if (verbose)
        printf("  client: node %d broken\n", c->node);
}

void topo_describe_node(int node, char *buf, size_t len)
{
    snprintf(buf, len, "node %d", node);
}

void client_conn_establish(struct conn *c, const struct verbs_addr *server, struct cm_terms terms)
{
    int credits = terms.credits;
    struct verbs_addr from = server_addr(c->node);
    FUZZ_CHECK(conns[c->node] == c && c->qp && !established[c->node],
               "node %d's connection established twice", c->node);
    /* During a datagram, only its node's server may cause it; outside one (its QP came from
     * the pool later) it uses what such a datagram brought: still a QP on the server's port. */
    FUZZ_CHECK(!truth.active || truly_from(&from),
               "node %d's connection established by someone else", c->node);
    FUZZ_CHECK(same_port(server, &from) && server->qpn && server->qpn <= CM_QPN_MASK,
               "node %d's connection pointed at a QP elsewhere", c->node);
    FUZZ_CHECK(credits > 0 && credits <= CM_CREDITS_MAX, "%d credits", credits);
    FUZZ_CHECK(terms.gather > 0 && terms.gather <= CM_GATHER_MAX, "gather of %d", terms.gather);
    established[c->node] = true;
    c->established = true;
    c->server_credits = credits;
    if (verbose)
        printf("  client: node %d established\n", c->node);
}

void client_conn_set_terms(struct conn *c, struct cm_terms terms)
{
    FUZZ_CHECK(conns[c->node] == c && c->qp && !established[c->node],
               "node %d's connection established twice", c->node);
    FUZZ_CHECK(terms.credits > 0 && terms.credits <= CM_CREDITS_MAX, "%d credits", terms.credits);
    FUZZ_CHECK(terms.gather > 0 && terms.gather <= CM_GATHER_MAX, "gather of %d", terms.gather);
    established[c->node] = true;
    c->established = true;
    c->server_credits = terms.credits;
}

void client_conn_ready(struct conn *c)
{
    FUZZ_CHECK(established[c->node] && c->state == CONN_CONNECTING, "node %d ready too early",
               c->node);
    c->state = CONN_READY;
    if (verbose)
        printf("  client: node %d ready\n", c->node);
}

void report_setup_done(const struct conn *c)
{
    FUZZ_CHECK(c->state == CONN_READY, "setup reported before ready");
}

void report_retransmission(void)
{
}

/* ---- the harness ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    return 0;
}

static void world_begin(uint8_t mode)
{
    vdev.use_grh = mode & 1;
    cfg = (struct config){.connect = CFG_CONNECT_ONDEMAND,
                          .protocol = (mode & 2) ? CFG_PROTOCOL_SERIAL : CFG_PROTOCOL_OVERLAP,
                          .connect_rto = 1e-3,
                          .connect_timeout = 1e9};
    cm_server_init(NULL, NULL, &server_ops);
    ondemand_init();
}

static void world_end(void)
{
    cm_server_fini();
    ondemand_fini();
    for (int r = 0; r < NPROCS; r++) {
        free(server_conns[r]);
        server_conns[r] = NULL;
    }
    for (int n = 0; n < NNODES; n++) {
        free(conns[n]);
        conns[n] = NULL;
        established[n] = false;
    }
    nconnected = 0; /* transitions the input left under way went with their connections */
}

/* A GRH naming gid as its source: IPv6 style, or RoCEv2's IPv4 header in the last 20 bytes. */
static void write_grh(uint8_t *grh, const uint8_t gid[16], bool ipv4)
{
    memset(grh, 0, UD_GRH_BYTES);
    if (!ipv4) {
        grh[0] = 6 << 4;
        memcpy(grh + 8, gid, 16);
        return;
    }
    uint8_t *h = grh + 20;
    h[0] = 0x45;
    h[8] = 64; /* TTL */
    h[9] = 17; /* UDP */
    memcpy(h + 12, gid + 12, 4);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += (uint32_t)h[i] << 8 | h[i + 1];
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    h[10] = (uint8_t)(~sum >> 8);
    h[11] = (uint8_t)~sum;
}

static void datagram(struct fuzz_input *in, struct ud_endpoint *u)
{
    uint8_t sel = fuzz_u8(in), flags = fuzz_u8(in), len = fuzz_u8(in);
    struct verbs_addr sender;
    if (sel == 255) {
        sender = (struct verbs_addr){0};
        sender.qpn = fuzz_u32(in) & CM_QPN_MASK;
        sender.lid = fuzz_u16(in);
        fuzz_bytes(in, sender.gid, sizeof(sender.gid));
    } else {
        int who = sel % (NPROCS + NNODES);
        sender = who < NPROCS ? client_addr(who) : server_addr(who - NPROCS);
        if (sel >= NPROCS + NNODES)
            sender.qpn += 0x1000; /* another QP of the same process (port) */
    }
    bool grh = flags & 1, ipv4 = flags & 2;
    size_t byte_len = (flags & 4) ? len : (size_t)UD_GRH_BYTES + len;
    /* Exactly byte_len bytes: reading past what was received is out of bounds. */
    uint8_t *buf = xmalloc(byte_len ? byte_len : 1);
    uint8_t *payload = buf + byte_len - len;
    if (byte_len >= UD_GRH_BYTES)
        write_grh(buf, sender.gid, ipv4);
    fuzz_bytes(in, payload, len);

    truth.active = true;
    truth.qpn = sender.qpn;
    truth.lid = vdev.use_grh ? 0 : sender.lid;
    truth.has_gid = grh && byte_len >= UD_GRH_BYTES;
    memset(truth.gid, 0, sizeof(truth.gid));
    if (ipv4) {
        truth.gid[10] = truth.gid[11] = 0xff;
        memcpy(truth.gid + 12, sender.gid + 12, 4);
    } else {
        memcpy(truth.gid, sender.gid, 16);
    }
    struct ibv_wc wc = {.status = IBV_WC_SUCCESS,
                        .opcode = IBV_WC_RECV,
                        .byte_len = (uint32_t)byte_len,
                        .src_qp = truth.qpn,
                        .slid = truth.lid,
                        .wc_flags = grh ? IBV_WC_GRH : 0};
    long refused = u->refused;
    ud_deliver(u, &wc, buf);
    if (verbose && u->refused != refused)
        printf("  %s: refused a datagram from QP 0x%x\n", u->who, truth.qpn);
    truth.active = false;
    free(buf);
}

static void connect_or_close(int node)
{
    if (node == topo.my_node)
        return;
    if (!conns[node])
        conns[node] = ondemand_start(node);
    else if (conns[node]->state == CONN_READY)
        ondemand_close(conns[node]);
}

static void expire_timers(void)
{
    for (int n = 0; n < NNODES; n++)
        if (conns[n] && conns[n]->state != CONN_READY)
            conns[n]->next_retry = 0;
    if (ondemand_close_asks()) /* no cap in the harness: it closes when asked to */
        close_if_asked();
    (void)ondemand_progress();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in = {data, size};
    world_begin(fuzz_u8(&in));
    while (in.left) {
        uint8_t e = fuzz_u8(&in);
        switch (e % 4) {
        case 0:
            datagram(&in, server_ud);
            break;
        case 1:
            datagram(&in, client_ud);
            break;
        case 2:
            connect_or_close(fuzz_u8(&in) % NNODES);
            break;
        default:
            expire_timers();
            break;
        }
    }
    world_end();
    return 0;
}
