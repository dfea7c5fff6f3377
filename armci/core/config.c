/*
 * The runtime's configuration: one table (config_table) names every
 * environment variable with its type, default, range, whether it must be
 * equal on every rank, and a line of help. The parser, the dump of the
 * effective configuration (armci-info -c, ARMCI_VERBOSE=1) and the check of
 * docs/ENVIRONMENT.md (test env-doc) all read this table.
 */
#include "core/config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/util.h"

struct config cfg;

static const char *const verbs_choices[] = {"auto", "rdma-core", "softib", NULL};
static const char *const connect_choices[] = {"ondemand", "static", NULL};
static const char *const protocol_choices[] = {"overlap", "serial", NULL};
static const char *const barrier_choices[] = {"rdma", "mpi", NULL};
static const char *const rmw_choices[] = {"auto", "device", "server", NULL};
static const char *const vector_choices[] = {"auto", "rdma", "server", NULL};
static const char *const hybrid_choices[] = {"auto", "off", "ud", NULL};
static const char *const wait_choices[] = {"auto", "spin", "yield", NULL};

#define FIELD(f) offsetof(struct config, f)
#define MiB      (1L << 20)

/* clang-format off */
const struct config_entry config_table[] = {
    {"ARMCI_NODE_SIZE", CFG_INT, FIELD(node_size), "0", 0, 1L << 20, NULL, true,
     "ranks per virtual node (0: a node is a host)"},
    {"ARMCI_VERBS", CFG_CHOICE, FIELD(verbs), "auto", 0, 0, verbs_choices, false,
     "verbs provider: auto, rdma-core or softib"},
    {"ARMCI_SOFTIB_LIBRARY", CFG_STRING, FIELD(softib_library), "", 0, 0, NULL, false,
     "path of libsoftib.so.0 (empty: search beside libarmci, then the build tree)"},
    {"ARMCI_IB_DEVICE", CFG_STRING, FIELD(device), "", 0, 0, NULL, false,
     "verbs device name (empty: the first with an active port)"},
    {"ARMCI_IB_PORT", CFG_INT, FIELD(port), "1", 1, 255, NULL, false,
     "port number on the device"},
    {"ARMCI_IB_GID_INDEX", CFG_INT, FIELD(gid_index), "-1", -1, 1L << 16, NULL, false,
     "GID index (-1: choose; RoCE needs one)"},
    {"ARMCI_IB_TIMEOUT", CFG_INT, FIELD(ib_timeout), "17", 1, 31, NULL, false,
     "RC local ACK timeout exponent: 4.096 us * 2^N per try (17: 0.54 s)"},
    {"ARMCI_IB_RETRY", CFG_INT, FIELD(ib_retry), "6", 0, 6, NULL, false,
     "RC retransmissions before a node counts as lost (at most 6: rdma_rxe takes 7 as "
     "'forever')"},
    {"ARMCI_VERBOSE", CFG_BOOL, FIELD(verbose), "0", 0, 0, NULL, false,
     "log library, layout, device and configuration on stderr"},
    {"ARMCI_SEND_WQES", CFG_INT, FIELD(send_wqes), "64", 4, 1L << 14, NULL, false,
     "send-queue depth of every client QP"},
    {"ARMCI_SERVER_CREDITS", CFG_INT, FIELD(server_credits), "32", 1, 1024, NULL, false,
     "SENDs a client may have outstanding at one data server (several small updates may share "
     "one)"},
    {"ARMCI_SERVER_BUFS", CFG_INT, FIELD(server_bufs), "128", 4, 1L << 16, NULL, false,
     "most receive buffers in each data server's shared receive queue: it starts with one "
     "client's ARMCI_SERVER_CREDITS and grows by as many for each client connected that sends "
     "requests"},
    {"ARMCI_SERVER_BUF_SIZE", CFG_SIZE, FIELD(server_buf_size), "8192", 1024, 16 * MiB, NULL,
     true,
     "payload bytes a data server's request buffer holds, and bytes of a client's small buffer: "
     "an update's larger payload stays at the client, and the server reads it by RDMA (pieces "
     "up to ARMCI_BOUNCE_SIZE)"},
    {"ARMCI_SERVER_POLL", CFG_BOOL, FIELD(server_poll), "0", 0, 0, NULL, false,
     "the data server spins instead of sleeping when idle"},
    {"ARMCI_SERVER_SPIN_US", CFG_DOUBLE, FIELD(server_spin_us), "100", 0, 1e6, NULL, false,
     "microseconds the data server polls at most after work before it sleeps; the time adapts "
     "to the gaps between requests (at most 50 under ARMCI_WAIT yield, polls then yield the "
     "core); 0: sleeps at once"},
    {"ARMCI_WAIT", CFG_CHOICE, FIELD(wait), "auto", 0, 0, wait_choices, false,
     "between polls a waiting thread spins (spin) or yields its core (yield); auto: yield "
     "when the job's ranks and data servers on this host outnumber its CPUs"},
    {"ARMCI_BOUNCE_SIZE", CFG_SIZE, FIELD(bounce_size), "65536", 1024, 64 * MiB, NULL, true,
     "bytes per registered bounce buffer"},
    {"ARMCI_BOUNCE_COUNT", CFG_INT, FIELD(bounce_count), "32", 2, 1L << 16, NULL, false,
     "most bounce buffers per process, and most small buffers (requests to data servers, small "
     "copied puts: ARMCI_SERVER_BUF_SIZE bytes each): each pool starts with 4, doubles while "
     "all are in flight and gives back at a fence what the last second did not need"},
    {"ARMCI_REG_CACHE", CFG_INT, FIELD(reg_cache), "64", 0, 4096, NULL, false,
     "registrations of user memory kept for reuse: puts, accumulates and gets of 256 KiB or more from or into memory ARMCI did not allocate move zero-copy (softib only: its memory regions follow the mapping); 0: copied through bounce buffers"},
    {"ARMCI_STRIDED_THRESHOLD", CFG_LONG, FIELD(strided_threshold), "-1", -1, 1L << 40, NULL,
     false, "-1: strided puts/gets priced both ways (RDMA or data server), cheaper taken; N: chunks of at least N bytes by RDMA, smaller through the server (vectors: 2048 if -1)"},
    {"ARMCI_CONNECT", CFG_CHOICE, FIELD(connect), "ondemand", 0, 0, connect_choices, true,
     "connection setup: ondemand or static"},
    {"ARMCI_CONNECT_PROTOCOL", CFG_CHOICE, FIELD(protocol), "overlap", 0, 0, protocol_choices,
     false, "on-demand setup protocol: overlap or serial"},
    {"ARMCI_CONNECT_TIMEOUT", CFG_DOUBLE, FIELD(connect_timeout), "10", 0.001, 1e6, NULL, false,
     "seconds without an answer from a data server before the job ends"},
    {"ARMCI_RECOVERY_TIMEOUT", CFG_DOUBLE, FIELD(recovery_timeout), "60", 0, 1e6, NULL, true,
     "seconds a broken connection is set up anew before its node is declared lost (0: a break "
     "ends the job)"},
    {"ARMCI_CONNECT_RETRY_US", CFG_DOUBLE, FIELD(connect_retry_us), "1000", 10, 1e8, NULL, false,
     "first retransmission timeout of a connection message, microseconds"},
    {"ARMCI_MAX_CONNECTIONS", CFG_INT, FIELD(max_connections), "0", 0, 1L << 20, NULL, false,
     "on-demand mode: most connections a process keeps to data servers (least recently used "
     "idle ones are closed, reopened when needed); 0: no cap"},
    {"ARMCI_MAX_SERVER_CONNECTIONS", CFG_INT, FIELD(max_server_connections), "-1", -1, 1L << 20,
     NULL, false,
     "on-demand mode: connections a data server holds before it asks its least recently "
     "active client to close one (a soft cap: clients close when idle); -1: "
     "ARMCI_MAX_CONNECTIONS, 0: none"},
    {"ARMCI_DIRECTORY_BYTES", CFG_INT, FIELD(directory_bytes), "65536", 44, 1L << 30, NULL, true,
     "on-demand mode: bytes of UD addresses of holders a node keeps (44 B each); every other "
     "address is kept by its holder and asked of it at first contact"},
    {"ARMCI_QP_POOL", CFG_INT, FIELD(qp_pool), "4", 0, 4096, NULL, false,
     "RC QPs each process (and each data server) keeps made in advance for first contacts; "
     "background threads refill them (on-demand overlap protocol)"},
    {"ARMCI_CONN_REPORT", CFG_STRING, FIELD(report_spec), "1", 0, 0, NULL, false,
     "where rank 0 writes the connection report at ARMCI_Finalize: 1 or stdout, stderr, "
     "file:PATH, 0 (none)"},
    {"ARMCI_CONN_MAP", CFG_STRING, FIELD(conn_map_spec), "", 0, 0, NULL, false,
     "file:PATH: rank 0 writes the node x node map of the connections the job opened, closed "
     "and the operations they carried, at ARMCI_Finalize (JSON; scripts/conn-map.py draws it); "
     "empty or 0: none"},
    {"ARMCI_BARRIER", CFG_CHOICE, FIELD(barrier), "rdma", 0, 0, barrier_choices, true,
     "barrier: rdma (flags and RDMA recursive doubling) or mpi"},
    {"ARMCI_RMW", CFG_CHOICE, FIELD(rmw), "auto", 0, 0, rmw_choices, true,
     "ARMCI_Rmw across nodes: auto (device atomics when the device has them), device, or "
     "server (the target node's data server)"},
    {"ARMCI_VECTOR", CFG_CHOICE, FIELD(vector), "auto", 0, 0, vector_choices, false,
     "vector puts and gets of short segments to another node: auto (the cheaper by the route "
     "cost model), rdma (one chain of RDMA writes or reads) or server (packed requests)"},
    {"ARMCI_HYBRID", CFG_CHOICE, FIELD(hybrid), "auto", 0, 0, hybrid_choices, true,
     "small operations to a node without a ready connection go over UD datagrams, exactly "
     "once (auto: on when ARMCI_MAX_CONNECTIONS caps connections or the job spans 256 nodes or "
     "more; off; ud: every operation that fits a datagram; on-demand mode only)"},
    {"ARMCI_HYBRID_PROMOTE", CFG_INT, FIELD(hybrid_promote), "400", 0, 1L << 30, NULL, false,
     "hybrid: operations over UD to a node before it gets an RC connection (when under the cap), "
     "doubled after each promotion to that node; 0: never"},
    {"ARMCI_HYBRID_SIZE", CFG_SIZE, FIELD(hybrid_size), "4096", 256, 65536, NULL, true,
     "hybrid: bytes per data datagram (cut to the port's MTU)"},
    {"ARMCI_HYBRID_SEGMENTED", CFG_SIZE, FIELD(hybrid_segmented), "65536", 0, 16 * MiB, NULL,
     false,
     "hybrid: bytes a transfer may have over UD when its pieces are longer than a datagram "
     "carries (each cut into several requests); 0: such transfers take RC"},
    {"ARMCI_HYBRID_WINDOW", CFG_INT, FIELD(hybrid_window), "32", 1, 4096, NULL, true,
     "hybrid: requests in flight per node (and answers each data server caches per client)"},
    {"ARMCI_HYBRID_RTO_US", CFG_DOUBLE, FIELD(hybrid_rto_us), "10000", 10, 1e8, NULL, false,
     "hybrid: first retransmission timeout of a data datagram, microseconds"},
    {"ARMCI_HYBRID_TIMEOUT", CFG_DOUBLE, FIELD(hybrid_timeout), "10", 0.01, 1e6, NULL, false,
     "hybrid: seconds a node may answer nothing to outstanding requests before the job ends"},
    {"ARMCI_TEST_HOOKS", CFG_INT, FIELD(test_hooks), "0", 0, 1L << 30, NULL, false,
     "fault injection for the test suites (bit set)"},
    {"ARMCI_TEST_EXPECT_NP", CFG_INT, FIELD(test_expect_np), "0", 0, 1L << 24, NULL, true,
     "test suites (tests/run-mpi.sh sets it): ARMCI_Init stops the job unless MPI_COMM_WORLD "
     "has this many processes; 0: no check"},
    {"ARMCI_TEST_EXPECT_NODES", CFG_INT, FIELD(test_expect_nodes), "0", 0, 1L << 24, NULL, true,
     "test suites (tests/run-mpi.sh sets it): ARMCI_Init stops the job unless the processes "
     "span this many nodes; 0: no check"},
};
/* clang-format on */
const int config_table_size = (int)ARRAY_SIZE(config_table);

/*
 * Variables with our prefixes that are not in the table but are not typos:
 * softib's knobs (read by libsoftib, docs/ENVIRONMENT.md) and the variables
 * of the build and test scripts.
 */
static const char *const other_known_names[] = {
    "SOFTIB_FABRIC", "SOFTIB_PTRACER", "SOFTIB_FABRIC_MB", "SOFTIB_LINK_LAYER", "SOFTIB_MTU",
    "SOFTIB_UD_LOSS", "SOFTIB_UD_REORDER", "SOFTIB_UD_DUP", "SOFTIB_UD_ERR_SILENT",
    "SOFTIB_UD_DEAF_RESET", "SOFTIB_UD_SEND_STALL", "SOFTIB_PORT_DOWN", "SOFTIB_RC_BREAK",
    "SOFTIB_DEFERRED", "SOFTIB_SEED", "SOFTIB_COST_MODEL", "SOFTIB_COST_CREATE_QP_US",
    "SOFTIB_COST_INIT_US", "SOFTIB_COST_RTR_US", "SOFTIB_COST_RTS_US", "SOFTIB_COST_DESTROY_QP_US",
    "SOFTIB_COST_REG_MR_US", "SOFTIB_WIRE_LATENCY_US", "SOFTIB_WIRE_MBPS",
    /* tests and scripts (tests/softib, bench, scripts/build-ga.sh) */
    "SOFTIB_INFO", "SOFTIB_BENCH_SMALL_PAGES", "ARMCI_LIB_DIR", "ARMCI_GA_BUILD_DIR",
    "ARMCI_INSTALL", NULL};

static bool name_known(const char *name, size_t len)
{
    for (int i = 0; i < config_table_size; i++)
        if (strlen(config_table[i].name) == len && !strncmp(config_table[i].name, name, len))
            return true;
    for (int i = 0; other_known_names[i]; i++)
        if (strlen(other_known_names[i]) == len && !strncmp(other_known_names[i], name, len))
            return true;
    return false;
}

/* Levenshtein distance between a[0..la) and b (names are short: two rows on the stack). */
static size_t edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b), prev[128], cur[128];
    if (la >= 128 || lb >= 128)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(size_t) * (lb + 1));
    }
    return prev[lb];
}

static const char *nearest_name(const char *name, size_t len)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (int i = 0; i < config_table_size + (int)ARRAY_SIZE(other_known_names) - 1; i++) {
        const char *cand =
            i < config_table_size ? config_table[i].name : other_known_names[i - config_table_size];
        size_t d = edit_distance(name, len, cand);
        if (d < best_d) {
            best_d = d;
            best = cand;
        }
    }
    return best;
}

void config_warn_unknown(char **env)
{
    for (char **e = env; e && *e; e++) {
        if (strncmp(*e, "ARMCI_", 6) && strncmp(*e, "SOFTIB_", 7))
            continue;
        size_t len = strcspn(*e, "=");
        if (name_known(*e, len))
            continue;
        armci_warn("environment variable %.*s is not one ARMCI-ODCM knows (did you mean %s?); "
                   "`armci-info -c` lists them",
                   (int)len, *e, nearest_name(*e, len));
    }
}

static void bad_value(const struct config_entry *e, const char *value, const char *expected)
{
    armci_die("ARMCI_Init", "environment variable %s=\"%s\" is invalid: expected %s", e->name,
              value, expected);
}

static void parse_number(const struct config_entry *e, const char *s, void *field)
{
    char *end;
    errno = 0;
    if (e->kind == CFG_DOUBLE) {
        double v = strtod(s, &end);
        if (errno || *end || end == s || v < e->min || v > e->max) {
            char expected[96];
            snprintf(expected, sizeof(expected), "a number in [%g, %g]", e->min, e->max);
            bad_value(e, s, expected);
        }
        *(double *)field = v;
        return;
    }
    long v = strtol(s, &end, 0);
    if (errno || *end || end == s || v < (long)e->min || v > (long)e->max) {
        char expected[96];
        snprintf(expected, sizeof(expected), "an integer in [%ld, %ld]", (long)e->min,
                 (long)e->max);
        bad_value(e, s, expected);
    }
    if (e->kind == CFG_SIZE)
        *(size_t *)field = (size_t)v;
    else if (e->kind == CFG_LONG)
        *(long *)field = v;
    else
        *(int *)field = (int)v;
}

static void parse_bool(const struct config_entry *e, const char *s, bool *field)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
        if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
            *field = !strcasecmp(s, yes[i]);
            return;
        }
    }
    bad_value(e, s, "0/1, yes/no, true/false or on/off");
}

static void parse_choice(const struct config_entry *e, const char *s, int *field)
{
    for (int i = 0; e->choices[i]; i++) {
        if (!strcasecmp(s, e->choices[i])) {
            *field = i;
            return;
        }
    }
    char expected[128] = "one of";
    for (int i = 0; e->choices[i]; i++) {
        strncat(expected, " ", sizeof(expected) - strlen(expected) - 1);
        strncat(expected, e->choices[i], sizeof(expected) - strlen(expected) - 1);
    }
    bad_value(e, s, expected);
}

static void parse(const struct config_entry *e, const char *s)
{
    void *field = (char *)&cfg + e->offset;
    switch (e->kind) {
    case CFG_INT:
    case CFG_LONG:
    case CFG_SIZE:
    case CFG_DOUBLE:
        parse_number(e, s, field);
        break;
    case CFG_BOOL:
        parse_bool(e, s, field);
        break;
    case CFG_CHOICE:
        parse_choice(e, s, field);
        break;
    case CFG_STRING:
        *(const char **)field = *s ? s : NULL;
        break;
    }
}

const char *config_source(const struct config_entry *e)
{
    const char *s = getenv(e->name);
    return s && *s ? s : e->dflt;
}

/* ARMCI_CONN_REPORT: the yes/no words of a boolean, stdout, stderr or file:PATH. */
static void parse_report_destination(void)
{
    static const char *const off[] = {"0", "no", "false", "off"};
    static const char *const on[] = {"1", "yes", "true", "on", "stdout"};
    const char *s = cfg.report_spec ? cfg.report_spec : "1";
    cfg.report_to = CFG_REPORT_OFF;
    cfg.report_file = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(off); i++)
        if (!strcasecmp(s, off[i]))
            return;
    for (size_t i = 0; i < ARRAY_SIZE(on); i++)
        if (!strcasecmp(s, on[i])) {
            cfg.report_to = CFG_REPORT_STDOUT;
            return;
        }
    if (!strcasecmp(s, "stderr")) {
        cfg.report_to = CFG_REPORT_STDERR;
    } else if (!strncmp(s, "file:", 5) && s[5]) {
        cfg.report_to = CFG_REPORT_FILE;
        cfg.report_file = s + 5;
    } else {
        armci_die("ARMCI_Init",
                  "environment variable ARMCI_CONN_REPORT=\"%s\" is invalid: expected 1 or "
                  "stdout, stderr, file:PATH, or 0 (no report)",
                  s);
    }
}

/* ARMCI_CONN_MAP: empty or 0 (none) or file:PATH. */
static void parse_conn_map(void)
{
    const char *s = cfg.conn_map_spec;
    cfg.conn_map_file = NULL;
    if (!s || !strcmp(s, "0"))
        return;
    if (strncmp(s, "file:", 5) || !s[5])
        armci_die("ARMCI_Init",
                  "environment variable ARMCI_CONN_MAP=\"%s\" is invalid: expected file:PATH, "
                  "or 0 (no map)",
                  s);
    cfg.conn_map_file = s + 5;
}

void cfg_load(void)
{
    cfg = (struct config){0};
    for (int i = 0; i < config_table_size; i++)
        parse(&config_table[i], config_source(&config_table[i]));
    parse_report_destination();
    parse_conn_map();
    cfg.connect_rto = cfg.connect_retry_us * 1e-6;
    if (cfg.max_server_connections < 0)
        cfg.max_server_connections = cfg.max_connections;
    cfg.hybrid_rto = cfg.hybrid_rto_us * 1e-6;
    armci_log_enable(cfg.verbose);
    if (cfg.hybrid == CFG_HYBRID_UD && cfg.connect == CFG_CONNECT_STATIC)
        armci_die("ARMCI_Init",
                  "ARMCI_HYBRID=ud needs on-demand connections, but ARMCI_CONNECT=static "
                  "connects every node at init (unset one of them)");
}

/*
 * ARMCI_HYBRID's rule: `ud` on; `auto` on when connections are capped (every
 * setup is then paid again and again, and the UD path skips them) or when the
 * job spans HYBRID_AUTO_NODES nodes or more (first contacts alone cost more
 * there than the server's wake-up per datagram: docs/SCALING.md, 256 nodes),
 * off below that without a cap (RC's gets need no remote CPU) and in static
 * mode (every node is connected at init). Job-wide: a cap set on one rank
 * turns it on everywhere, since the data servers' UD endpoints and the route
 * of ARMCI_Rmw depend on it.
 */
#define HYBRID_AUTO_NODES 256

void config_resolve_hybrid(MPI_Comm comm, int nodes)
{
    int on = cfg.hybrid == CFG_HYBRID_UD ||
             (cfg.hybrid == CFG_HYBRID_AUTO && cfg.connect == CFG_CONNECT_ONDEMAND &&
              (cfg.max_connections > 0 || nodes >= HYBRID_AUTO_NODES));
    int any = 0;
    MPI_Allreduce(&on, &any, 1, MPI_INT, MPI_MAX, comm);
    cfg.hybrid_on = any;
}

void config_check_agreement(MPI_Comm comm)
{
    double mine[ARRAY_SIZE(config_table)], lo[ARRAY_SIZE(config_table)],
        hi[ARRAY_SIZE(config_table)];
    for (int i = 0; i < config_table_size; i++)
        mine[i] = config_table[i].must_match ? config_numeric(&config_table[i]) : 0;
    MPI_Allreduce(mine, lo, config_table_size, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(mine, hi, config_table_size, MPI_DOUBLE, MPI_MAX, comm);
    for (int i = 0; i < config_table_size; i++) {
        if (lo[i] == hi[i])
            continue;
        char value[256];
        config_format(&config_table[i], value, sizeof(value));
        armci_die("ARMCI_Init",
                  "environment variable %s must be the same on every rank: it is %s here, "
                  "and ranks differ between %g and %g",
                  config_table[i].name, value, lo[i], hi[i]);
    }
}

double config_numeric(const struct config_entry *e)
{
    const void *field = (const char *)&cfg + e->offset;
    switch (e->kind) {
    case CFG_INT:
    case CFG_CHOICE:
        return *(const int *)field;
    case CFG_LONG:
        return (double)*(const long *)field;
    case CFG_SIZE:
        return (double)*(const size_t *)field;
    case CFG_DOUBLE:
        return *(const double *)field;
    case CFG_BOOL:
        return *(const bool *)field;
    case CFG_STRING:
        break;
    }
    return 0;
}

void config_format(const struct config_entry *e, char *buf, size_t len)
{
    const void *field = (const char *)&cfg + e->offset;
    switch (e->kind) {
    case CFG_CHOICE:
        snprintf(buf, len, "%s", e->choices[*(const int *)field]);
        break;
    case CFG_STRING:
        snprintf(buf, len, "%s", *(const char *const *)field ? *(const char *const *)field : "");
        break;
    case CFG_BOOL:
        snprintf(buf, len, "%d", *(const bool *)field);
        break;
    case CFG_DOUBLE:
        snprintf(buf, len, "%g", *(const double *)field);
        break;
    default:
        snprintf(buf, len, "%.0f", config_numeric(e));
        break;
    }
}

void config_dump(FILE *out, bool markdown)
{
    if (markdown) {
        fprintf(out, "| variable | default | must match | meaning |\n|---|---|---|---|\n");
        for (int i = 0; i < config_table_size; i++) {
            const struct config_entry *e = &config_table[i];
            fprintf(out, "| `%s` | %s%s%s | %s | %s |\n", e->name, *e->dflt ? "`" : "",
                    *e->dflt ? e->dflt : "(empty)", *e->dflt ? "`" : "",
                    e->must_match ? "yes" : "no", e->help);
        }
        return;
    }
    for (int i = 0; i < config_table_size; i++) {
        const struct config_entry *e = &config_table[i];
        char value[256];
        config_format(e, value, sizeof(value));
        fprintf(out, "%-24s %-12s (default %s%s)  %s\n", e->name, value,
                *e->dflt ? e->dflt : "\"\"", e->must_match ? ", must match on all ranks" : "",
                e->help);
    }
}
