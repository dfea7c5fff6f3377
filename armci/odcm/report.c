#include "odcm/report.h"

#include <mpi.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/hybrid_stats.h"
#include "core/error.h"
#include "core/memstat.h"
#include "core/recovery_stats.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "odcm/cm_types.h"
#include "odcm/cm_server.h"
#include "odcm/conn_map.h"
#include "verbs/atomics.h"

/* Where rank 0 writes the report (ARMCI_CONN_REPORT): stdout, stderr or a file. */
static FILE *report_out;

static bool open_report(void)
{
    report_out = cfg.report_to == CFG_REPORT_STDERR ? stderr : stdout;
    if (cfg.report_to != CFG_REPORT_FILE)
        return true;
    report_out = fopen(cfg.report_file, "w");
    if (!report_out)
        armci_warn("ARMCI_CONN_REPORT=file:%s: cannot open the file (%s): no report",
                   cfg.report_file, strerror(errno));
    return report_out != NULL;
}

static long retransmissions;
static long setups;
static double setup_sum, setup_min = 1e30, setup_max;

void report_init(void)
{
    retransmissions = setups = 0;
    setup_sum = setup_max = 0;
    setup_min = 1e30;
}

void report_setup_done(const struct conn *c)
{
    double t = c->setup_end - c->setup_begin;
    setups++;
    setup_sum += t;
    setup_min = t < setup_min ? t : setup_min;
    setup_max = t > setup_max ? t : setup_max;
}

void report_retransmission(void)
{
    retransmissions++;
}

long report_retransmission_count(void)
{
    return retransmissions;
}

static long qp_bytes(int send_depth)
{
    return REPORT_QP_BASE + (long)send_depth * REPORT_SEND_WQE;
}

struct reduced {
    long min, max, sum;
};

static struct reduced reduce_long(long v, MPI_Comm comm)
{
    struct reduced r;
    MPI_Reduce(&v, &r.min, 1, MPI_LONG, MPI_MIN, 0, comm);
    MPI_Reduce(&v, &r.max, 1, MPI_LONG, MPI_MAX, 0, comm);
    MPI_Reduce(&v, &r.sum, 1, MPI_LONG, MPI_SUM, 0, comm);
    return r;
}

/* ---- the runtime's own memory per process (core/memstat.h), user segments excluded ---- */

struct memory_report {
    struct reduced runtime, buffers; /* peaks over the run */
    long kind_sum[MEM_KINDS];        /* each kind's peak, summed over processes */
};

/* Collective over the job. */
static struct memory_report reduce_memory(void)
{
    struct memory_report m = {0};
    m.runtime = reduce_long(memstat_runtime_peak(), rt.comm);
    m.buffers = reduce_long(memstat_buffers_peak(), rt.comm);
    long peaks[MEM_KINDS];
    for (int k = 0; k < MEM_KINDS; k++)
        peaks[k] = memstat_peak((enum mem_kind)k);
    MPI_Reduce(peaks, m.kind_sum, MEM_KINDS, MPI_LONG, MPI_SUM, 0, rt.comm);
    return m;
}

static void print_memory(const struct memory_report *m)
{
    fprintf(report_out,
            "  runtime memory per process: min %.1f KiB, avg %.1f KiB, max %.1f KiB; registered "
            "buffers: min %.1f KiB, avg %.1f KiB, max %.1f KiB\n",
            m->runtime.min / 1024.0, (double)m->runtime.sum / rt.nprocs / 1024.0,
            m->runtime.max / 1024.0, m->buffers.min / 1024.0,
            (double)m->buffers.sum / rt.nprocs / 1024.0, m->buffers.max / 1024.0);
    fprintf(report_out, "  by kind (avg per process, bytes):");
    for (int k = 0; k < MEM_KINDS; k++)
        fprintf(report_out, " %s %.0f", memstat_name((enum mem_kind)k),
                (double)m->kind_sum[k] / rt.nprocs);
    fprintf(report_out, "\n");
}

/* Fields at the end of the ARMCI_CONN_REPORT line (ends it). */
static void print_memory_fields(const struct memory_report *m)
{
    fprintf(report_out,
            " rt_mem_min=%ld rt_mem_avg=%.0f rt_mem_max=%ld buf_mem_min=%ld buf_mem_avg=%.0f "
            "buf_mem_max=%ld",
            m->runtime.min, (double)m->runtime.sum / rt.nprocs, m->runtime.max, m->buffers.min,
            (double)m->buffers.sum / rt.nprocs, m->buffers.max);
    for (int k = 0; k < MEM_KINDS; k++)
        fprintf(report_out, " mem_%s_avg=%.0f", memstat_name((enum mem_kind)k),
                (double)m->kind_sum[k] / rt.nprocs);
    fprintf(report_out, "\n");
}

/* ---- the connection cap (ARMCI_MAX_CONNECTIONS): closings and reopenings ---- */

struct cap_report {
    long closed, reopened, over_cap, asked; /* sums over the job */
    long peak, server_peak;                 /* largest per process, per server */
};

/* Collective over the job. */
static struct cap_report reduce_cap(struct cm_stats cs)
{
    struct cm_server_stats ss = topo_is_master() ? cm_server_stats() : (struct cm_server_stats){0};
    long sums[4] = {cs.closed, cs.reopened, cs.over_cap, ss.asked}, peaks[2] = {cs.peak, ss.peak};
    long sum_out[4], peak_out[2];
    MPI_Reduce(sums, sum_out, 4, MPI_LONG, MPI_SUM, 0, rt.comm);
    MPI_Reduce(peaks, peak_out, 2, MPI_LONG, MPI_MAX, 0, rt.comm);
    return (struct cap_report){.closed = sum_out[0],
                               .reopened = sum_out[1],
                               .over_cap = sum_out[2],
                               .asked = sum_out[3],
                               .peak = peak_out[0],
                               .server_peak = peak_out[1]};
}

static void print_cap(const struct cap_report *r)
{
    if (!cfg.max_connections && !cfg.max_server_connections && !r->closed)
        return;
    fprintf(report_out,
            "  connection cap %d: at most %ld per process, %ld per server at once; %ld closed, %ld "
            "reopened; %ld clients asked to close by servers; cap exceeded %ld times for lock "
            "waits\n",
            cfg.max_connections, r->peak, r->server_peak, r->closed, r->reopened, r->asked,
            r->over_cap);
}

/* Fields of the ARMCI_CONN_REPORT line (after the setup times). */
static void print_cap_fields(const struct cap_report *r)
{
    fprintf(report_out,
            " cap=%d c2s_peak_max=%ld s2c_peak_max=%ld closed=%ld reopened=%ld asked=%ld "
            "over_cap=%ld",
            cfg.max_connections, r->peak, r->server_peak, r->closed, r->reopened, r->asked,
            r->over_cap);
}

/* ---- the hybrid UD data path (ARMCI_HYBRID) ---- */

#define HYBRID_FIELDS 11

/* Collective over the job: the counters summed. */
static void reduce_hybrid(long sums[HYBRID_FIELDS])
{
    const struct hybrid_stats *h = &hybrid_stats;
    long mine[HYBRID_FIELDS] = {h->ud_ops,         h->rc_ops,   h->promotions, h->retransmissions,
                                h->answers_late,   h->executed, h->duplicates, h->early,
                                h->answers_unsent, h->refused,  h->nodes};
    MPI_Reduce(mine, sums, HYBRID_FIELDS, MPI_LONG, MPI_SUM, 0, rt.comm);
}

static void print_hybrid(const long s[HYBRID_FIELDS], long closed)
{
    if (!cfg.hybrid_on)
        return;
    fprintf(report_out,
            "  hybrid UD path (%s): %ld operations over UD, %ld over RC; %ld promotions to RC, "
            "%ld demotions (closed under the cap); %ld UD retransmissions, %ld answered from "
            "the cache, %ld early requests dropped, %ld answers unsent, %ld late answers, %ld "
            "datagrams refused\n",
            cfg.hybrid == CFG_HYBRID_UD ? "ud" : "auto", s[0], s[1], s[2], closed, s[3], s[6], s[7],
            s[8], s[4], s[9]);
}

static void print_hybrid_fields(const long s[HYBRID_FIELDS], long closed)
{
    fprintf(
        report_out,
        " hybrid=%d ud_ops=%ld rc_ops=%ld promotions=%ld demotions=%ld ud_retrans=%ld "
        "ud_duplicates=%ld ud_early=%ld ud_unsent=%ld ud_late=%ld ud_refused=%ld ud_executed=%ld "
        "ud_nodes_avg=%.2f",
        cfg.hybrid_on, s[0], s[1], s[2], cfg.hybrid_on ? closed : 0, s[3], s[6], s[7], s[8], s[4],
        s[9], s[5], (double)s[10] / rt.nprocs);
}

/* ---- connection recovery (ARMCI_RECOVERY_TIMEOUT) ---- */

#define RECOVERY_FIELDS 7

struct recovery_report {
    long sums[RECOVERY_FIELDS]; /* breaks, recovered, replayed, replaced, server replays,
                                   served on a broken end, left unserved for the replay */
    double slowest;
};

/* Collective over the job. */
static struct recovery_report reduce_recovery(void)
{
    const struct recovery_stats *s = &recovery_stats;
    long mine[RECOVERY_FIELDS] = {s->breaks,         s->recovered,     s->replayed, s->replaced,
                                  s->server_replays, s->served_broken, s->unserved};
    struct recovery_report r;
    MPI_Reduce(mine, r.sums, RECOVERY_FIELDS, MPI_LONG, MPI_SUM, 0, rt.comm);
    MPI_Reduce(&s->slowest, &r.slowest, 1, MPI_DOUBLE, MPI_MAX, 0, rt.comm);
    return r;
}

static void print_recovery(const struct recovery_report *r)
{
    if (!r->sums[0] && !r->sums[3])
        return;
    fprintf(report_out,
            "  connection recovery: %ld connections broke, %ld set up anew (the slowest in %.2f "
            "s), %ld requests replayed; servers replaced %ld ends and answered %ld replayed "
            "requests again without applying them, served %ld requests that arrived on a broken "
            "end and left %ld that a failing connection interrupted to their replay\n",
            r->sums[0], r->sums[1], r->slowest, r->sums[2], r->sums[3], r->sums[4], r->sums[5],
            r->sums[6]);
}

static void print_recovery_fields(const struct recovery_report *r)
{
    fprintf(report_out,
            " recovery_timeout=%g breaks=%ld recovered=%ld replayed=%ld recovery_s_max=%.3f "
            "server_replaced=%ld server_replays=%ld server_served_broken=%ld server_unserved=%ld",
            cfg.recovery_timeout, r->sums[0], r->sums[1], r->sums[2], r->slowest, r->sums[3],
            r->sums[4], r->sums[5], r->sums[6]);
}

void report_connections(const struct intmap *conns, struct cm_stats cap_stats)
{
    long c2s = (long)conns->count;
    long s2c = topo_is_master() ? cm_server_conn_count() : 0;
    /* Static mode would connect every process to every other node's server (and to its own
     * node's when Rmw go through the device: verbs/atomics.h). */
    int loopback = rmw_route_loopback() ? 1 : 0;
    long static_c2s = topo.num_nodes - 1 + loopback;
    long static_s2c =
        topo_is_master() ? rt.nprocs - topo_node_nprocs(topo.my_node) * (1 - loopback) : 0;
    long mem = c2s * qp_bytes(cfg.send_wqes) + s2c * qp_bytes(cm_server_send_depth());
    long static_mem =
        static_c2s * qp_bytes(cfg.send_wqes) + static_s2c * qp_bytes(cm_server_send_depth());
    /* In static mode the setups happen at init, all together. */
    if (cfg.connect == CFG_CONNECT_STATIC) {
        struct conn *c;
        INTMAP_FOR_EACH(conns, c)
        report_setup_done(c);
    }

    struct reduced rc2s = reduce_long(c2s, rt.comm);
    long mem_total, static_total, retrans_total, setups_total;
    MPI_Reduce(&mem, &mem_total, 1, MPI_LONG, MPI_SUM, 0, rt.comm);
    MPI_Reduce(&static_mem, &static_total, 1, MPI_LONG, MPI_SUM, 0, rt.comm);
    MPI_Reduce(&retransmissions, &retrans_total, 1, MPI_LONG, MPI_SUM, 0, rt.comm);
    MPI_Reduce(&setups, &setups_total, 1, MPI_LONG, MPI_SUM, 0, rt.comm);
    double smin, smax, ssum;
    MPI_Reduce(&setup_min, &smin, 1, MPI_DOUBLE, MPI_MIN, 0, rt.comm);
    MPI_Reduce(&setup_max, &smax, 1, MPI_DOUBLE, MPI_MAX, 0, rt.comm);
    MPI_Reduce(&setup_sum, &ssum, 1, MPI_DOUBLE, MPI_SUM, 0, rt.comm);

    struct memory_report rtmem = reduce_memory();
    struct cap_report cap = reduce_cap(cap_stats);
    long hybrid[HYBRID_FIELDS];
    reduce_hybrid(hybrid);
    struct recovery_report recovery = reduce_recovery();

    /* Servers: only masters have one. */
    struct reduced rs2c = {0, 0, 0};
    if (topo.master_comm != MPI_COMM_NULL)
        rs2c = reduce_long(s2c, topo.master_comm);

    const char *mode = cfg.connect == CFG_CONNECT_STATIC ? "static" : "ondemand";
    const char *protocol = cfg.connect == CFG_CONNECT_STATIC     ? "mpi"
                           : cfg.protocol == CFG_PROTOCOL_SERIAL ? "serial"
                                                                 : "overlap";
    double c2s_avg = (double)rc2s.sum / rt.nprocs;
    double s2c_avg = (double)rs2c.sum / topo.num_nodes;
    conn_map_write(&(struct conn_map_totals){.mode = mode,
                                             .protocol = protocol,
                                             .c2s_min = rc2s.min,
                                             .c2s_max = rc2s.max,
                                             .c2s_avg = c2s_avg,
                                             .s2c_min = rs2c.min,
                                             .s2c_max = rs2c.max,
                                             .s2c_avg = s2c_avg,
                                             .mem_bytes = mem_total,
                                             .static_mem_bytes = static_total,
                                             .setups = setups_total,
                                             .retrans = retrans_total,
                                             .closed = cap.closed,
                                             .reopened = cap.reopened,
                                             .static_c2s = static_c2s,
                                             .loopback = loopback});

    if (rt.me != 0 || cfg.report_to == CFG_REPORT_OFF || !open_report())
        return;
    double ratio = static_total ? (double)mem_total / (double)static_total : 0;
    double savg = setups_total ? ssum / (double)setups_total : 0;
    if (!setups_total)
        smin = smax = 0;
    /* Static mode: a server holds one connection per process of the other nodes. */
    long static_s2c_min = rt.nprocs, static_s2c_max = 0;
    for (int node = 0; node < topo.num_nodes; node++) {
        long s = rt.nprocs - topo_node_nprocs(node) * (1 - loopback);
        static_s2c_min = s < static_s2c_min ? s : static_s2c_min;
        static_s2c_max = s > static_s2c_max ? s : static_s2c_max;
    }

    fprintf(report_out,
            "ARMCI-ODCM connection report: %s connections (%s protocol), %d processes on %d "
            "nodes\n",
            mode, protocol, rt.nprocs, topo.num_nodes);
    fprintf(report_out, "  %-28s %6s %8s %6s   %s\n", "", "min", "avg", "max", "static mode");
    fprintf(report_out, "  %-28s %6ld %8.2f %6ld   %ld\n", "client->server per process", rc2s.min,
            c2s_avg, rc2s.max, static_c2s);
    if (static_s2c_min == static_s2c_max)
        fprintf(report_out, "  %-28s %6ld %8.2f %6ld   %ld\n", "server->client per server",
                rs2c.min, s2c_avg, rs2c.max, static_s2c_max);
    else
        fprintf(report_out, "  %-28s %6ld %8.2f %6ld   %ld-%ld\n", "server->client per server",
                rs2c.min, s2c_avg, rs2c.max, static_s2c_min, static_s2c_max);
    if (loopback)
        fprintf(report_out,
                "  (counts include loopback connections to the own node's data server: every "
                "ARMCI_Rmw on longs goes through the device)\n");
    fprintf(report_out, "  connection memory: %.1f KiB (static mode: %.1f KiB, ratio %.3f)\n",
            mem_total / 1024.0, static_total / 1024.0, ratio);
    fprintf(report_out,
            "  connection setup: min %.0f us, avg %.0f us, max %.0f us over %ld connections; "
            "%ld retransmissions\n",
            smin * 1e6, savg * 1e6, smax * 1e6, setups_total, retrans_total);
    print_cap(&cap);
    print_hybrid(hybrid, cap.closed);
    print_recovery(&recovery);
    print_memory(&rtmem);
    fprintf(report_out,
            "ARMCI_CONN_REPORT mode=%s protocol=%s procs=%d nodes=%d c2s_min=%ld c2s_avg=%.3f "
            "c2s_max=%ld s2c_min=%ld s2c_avg=%.3f s2c_max=%ld mem_bytes=%ld static_mem_bytes=%ld "
            "mem_ratio=%.4f retrans=%ld setups=%ld setup_us_min=%.1f setup_us_avg=%.1f "
            "setup_us_max=%.1f",
            mode, protocol, rt.nprocs, topo.num_nodes, rc2s.min, c2s_avg, rc2s.max, rs2c.min,
            s2c_avg, rs2c.max, mem_total, static_total, ratio, retrans_total, setups_total,
            smin * 1e6, savg * 1e6, smax * 1e6);
    print_cap_fields(&cap);
    print_hybrid_fields(hybrid, cap.closed);
    print_recovery_fields(&recovery);
    print_memory_fields(&rtmem);
    if (report_out == stdout || report_out == stderr)
        fflush(report_out);
    else
        fclose(report_out);
}
