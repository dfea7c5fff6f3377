/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * softib-info: what is on a softib fabric, in the spirit of ibv_devinfo.
 *
 *   softib-info [-f NAME] [-l] [-v] [-c] [--gc]
 *
 * Prints the device and port, the contexts (one per process that opened
 * the device, each with its LID) and every QP with its state and peer.
 * -v adds CQs, SRQs and MRs; -c per-process counters; --gc releases what
 * dead processes left and removes the file if nobody is left on it.
 * Without -f (or SOFTIB_FABRIC) it does so for every fabric of ours in
 * /dev/shm, since each job has its own; -l only lists them.
 * Reads the tables without taking their locks: a snapshot, not a lock-step
 * view. Exit status: 0, or 1 when there is no fabric.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sib.h"

static const char *state_str(uint8_t s)
{
    static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

    return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static void print_port(const struct sib_fabric *f)
{
    const struct sib_hdr *h = f->hdr;

    printf("hca_id:\tsoftib0\n");
    printf("\ttransport:\t\t\tInfiniBand (0)\n");
    printf("\tfw_ver:\t\t\t\tsoftib %u\n", h->version);
    printf("\tnode_guid:\t\t\t0253:6f66:7400:0000\n");
    printf("\tphys_port_cnt:\t\t\t1\n");
    printf("\t\tport:\t1\n");
    printf("\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n");
    printf("\t\t\tmax_mtu:\t\t4096 (5)\n");
    printf("\t\t\tactive_mtu:\t\t%u (%u)\n", sib_mtu_bytes((int)h->mtu_enum), h->mtu_enum);
    printf("\t\t\tlink_layer:\t\t%s\n", h->roce ? "Ethernet" : "InfiniBand");
    printf("fabric:\t%s (%llu MiB, heap %llu KiB used)\n\n", f->path,
           (unsigned long long)(f->size >> 20), (unsigned long long)(h->heap_used >> 10));
}

static uint32_t count_owned(const struct sib_fabric *f, uint32_t ctx, int what)
{
    uint32_t n = 0;

    if (what == 0)
        for (uint32_t i = 0; i < SIB_MAX_QP; i++)
            n += sib_fqp_at(f, i)->qpn && sib_fqp_at(f, i)->owner == ctx;
    if (what == 1)
        for (uint32_t i = 0; i < SIB_MAX_CQ; i++)
            n += sib_fcq_at(f, i)->in_use && sib_fcq_at(f, i)->owner == ctx;
    if (what == 2)
        for (uint32_t i = 0; i < SIB_MAX_MR; i++)
            n += sib_fmr_at(f, i)->lkey && sib_fmr_at(f, i)->owner == ctx;
    return n;
}

static void print_contexts(const struct sib_fabric *f)
{
    printf("contexts:\n  %-8s %-7s %-6s %5s %5s %5s\n", "PID", "LID", "STATE", "QPs", "CQs", "MRs");
    for (uint32_t i = 0; i < SIB_MAX_CTX; i++) {
        const struct sib_fctx *c = sib_fctx_at(f, i);

        if (!c->in_use)
            continue;
        printf("  %-8d 0x%04x  %-6s %5u %5u %5u\n", c->pid, c->lid,
               sib_pid_alive(c->pid, c->start_time) ? "alive" : "dead", count_owned(f, i, 0),
               count_owned(f, i, 1), count_owned(f, i, 2));
    }
    printf("\n");
}

static void print_qps(const struct sib_fabric *f)
{
    printf("queue pairs:\n  %-8s %-4s %-5s %-8s %-7s %-8s %-9s %s\n", "QPN", "TYPE", "STATE", "PID",
           "LID", "PEER-QPN", "RQ", "SRQ");
    for (uint32_t i = 0; i < SIB_MAX_QP; i++) {
        const struct sib_fqp *q = sib_fqp_at(f, i);

        if (!q->qpn)
            continue;
        printf("  0x%06x %-4s %-5s %-8d 0x%04x  ", q->qpn, q->type == IBV_QPT_RC ? "RC" : "UD",
               state_str(q->state), q->pid, sib_fctx_at(f, q->owner)->lid);
        if (q->type == IBV_QPT_RC && q->state >= IBV_QPS_RTR && q->state <= IBV_QPS_SQE)
            printf("0x%06x ", q->dest_qpn);
        else
            printf("%-8s ", "-");
        printf("%4u/%-4u %s\n", q->rq.tail - q->rq.head, q->rq.cap, q->srq ? "yes" : "-");
    }
    printf("\n");
}

static void print_verbose(const struct sib_fabric *f)
{
    printf("completion queues:\n  %-5s %-8s %7s %7s %-6s %s\n", "SLOT", "PID", "ENTRIES", "CQE",
           "ARMED", "FLAGS");
    for (uint32_t i = 0; i < SIB_MAX_CQ; i++) {
        const struct sib_fcq *c = sib_fcq_at(f, i);

        if (c->in_use)
            printf("  %-5u %-8d %7u %7u %-6s %s%s\n", i, sib_fctx_at(f, c->owner)->pid,
                   c->tail - c->head, c->cap, c->armed ? "yes" : "no",
                   c->chan.len ? "channel " : "", c->overrun ? "OVERRUN" : "");
    }
    printf("\nshared receive queues:\n  %-5s %-8s %9s %s\n", "SLOT", "PID", "WQEs", "LIMIT");
    for (uint32_t i = 0; i < SIB_MAX_SRQ; i++) {
        const struct sib_fsrq *s = sib_fsrq_at(f, i);

        if (s->in_use)
            printf("  %-5u %-8d %4u/%-4u %u\n", i, sib_fctx_at(f, s->owner)->pid,
                   s->rq.tail - s->rq.head, s->rq.cap, s->limit);
    }
    printf("\nmemory regions:\n  %-8s %-8s %-8s %-18s %-12s %s\n", "LKEY", "RKEY", "PID", "ADDR",
           "LENGTH", "ACCESS");
    for (uint32_t i = 0; i < SIB_MAX_MR; i++) {
        const struct sib_fmr *m = sib_fmr_at(f, i);

        if (m->lkey)
            printf("  0x%06x 0x%06x %-8d 0x%016llx %-12llu %s%s%s%s\n", m->lkey, m->rkey, m->pid,
                   (unsigned long long)m->addr, (unsigned long long)m->length,
                   (m->access & IBV_ACCESS_LOCAL_WRITE) ? "LW " : "",
                   (m->access & IBV_ACCESS_REMOTE_WRITE) ? "RW " : "",
                   (m->access & IBV_ACCESS_REMOTE_READ) ? "RR " : "",
                   (m->access & IBV_ACCESS_REMOTE_ATOMIC) ? "RA" : "");
    }
    printf("\n");
}

static void print_counters(const struct sib_fabric *f)
{
#define C(x)                                    \
    {                                           \
#x, offsetof(struct softib_counters, x) \
    }
    static const struct {
        const char *name;
        size_t off;
    } fields[] = {
        C(contexts_opened),
        C(qp_created_rc),
        C(qp_created_ud),
        C(qp_destroyed_rc),
        C(qp_destroyed_ud),
        C(qp_modifies),
        C(mr_registered),
        C(mr_deregistered),
        C(sends),
        C(send_bytes),
        C(recvs),
        C(recv_bytes),
        C(rdma_writes),
        C(rdma_write_bytes),
        C(rdma_reads),
        C(rdma_read_bytes),
        C(atomics),
        C(ud_sends),
        C(ud_recvs),
        C(ud_drops_nobuf),
        C(ud_drops_injected),
        C(ud_drops_other),
        C(ud_reordered),
        C(ud_duplicated),
        C(link_down_drops),
        C(rc_breaks),
        C(rnr_retries),
        C(transport_retries),
        C(wc_errors),
        C(wc_flushed),
        C(cq_overruns),
        C(cq_events),
        C(async_events),
    };
#undef C
    for (uint32_t i = 0; i < SIB_MAX_CTX; i++) {
        const struct sib_fctx *c = sib_fctx_at(f, i);

        if (!c->in_use)
            continue;
        printf("counters of pid %d (LID 0x%04x):\n", c->pid, c->lid);
        for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
            uint64_t v = *(const uint64_t *)((const char *)&c->cnt + fields[k].off);

            if (v)
                printf("  %-20s %llu\n", fields[k].name, (unsigned long long)v);
        }
    }
}

/* Release dead processes' resources; remove the file if nobody is left. */
static int gc(struct sib_fabric *f)
{
    uint32_t live;

    if (flock(f->fd, LOCK_EX))
        return errno;
    sib_lock(&f->hdr->lock);
    live = sib_reclaim(f);
    sib_unlock(&f->hdr->lock);
    if (!live)
        unlink(f->path);
    flock(f->fd, LOCK_UN);
    printf("%s: %u live context%s%s\n", f->path, live, live == 1 ? "" : "s",
           live ? "" : ", file removed");
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: softib-info [-f NAME] [-l] [-v] [-c] [--gc] [--version] [--help]\n"
            "  -f, --fabric NAME  the fabric SOFTIB_FABRIC=NAME selects, or its file as -l\n"
            "                     prints it (" SIB_FABRIC_PREFIX "NAME); default: $SOFTIB_FABRIC,\n"
            "                     else every fabric of ours in " SIB_FABRIC_DIR ")\n"
            "  -l, --list         only the fabrics' names and live contexts\n"
            "  -v, --verbose      also CQs, SRQs and MRs\n"
            "  -c, --counters     per-process counters\n"
            "      --gc           reclaim what dead processes left; remove an empty fabric\n"
            "      --version      softib-info's version\n"
            "  -h, --help         this text\n");
}

/* -f takes what -l prints (the file) as well as the SOFTIB_FABRIC name. */
static const char *fabric_name_of(const char *arg)
{
    if (!strncmp(arg, SIB_FABRIC_DIR, strlen(SIB_FABRIC_DIR)))
        arg += strlen(SIB_FABRIC_DIR);
    if (!strncmp(arg, SIB_FABRIC_BASE, strlen(SIB_FABRIC_BASE)))
        arg += strlen(SIB_FABRIC_BASE);
    return arg;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every fabric file in /dev/shm that is ours: one per job, and the per-user
 * one. Returns how many (at most max), sorted. */
static int our_fabrics(char **paths, int max)
{
    struct dirent *e;
    struct stat st;
    int n = 0;
    DIR *d = opendir(SIB_FABRIC_DIR);

    if (!d)
        return 0;
    while (n < max && (e = readdir(d))) {
        char path[512];

        if (strncmp(e->d_name, SIB_FABRIC_BASE, strlen(SIB_FABRIC_BASE)))
            continue;
        snprintf(path, sizeof(path), SIB_FABRIC_DIR "%s", e->d_name);
        if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
            continue;
        paths[n] = strdup(path);
        if (paths[n])
            n++;
    }
    closedir(d);
    qsort(paths, (size_t)n, sizeof(*paths), by_name);
    return n;
}

static uint32_t live_contexts(const struct sib_fabric *f)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < SIB_MAX_CTX; i++) {
        const struct sib_fctx *c = sib_fctx_at(f, i);

        n += c->in_use && sib_pid_alive(c->pid, c->start_time);
    }
    return n;
}

enum mode { SHOW, LIST, GC };

static int one(const char *path, enum mode mode, bool verbose, bool counters)
{
    struct sib_fabric f;
    int rc = sib_fabric_map(&f, path, mode == GC);

    if (rc) {
        const char *why = rc == ENOENT   ? "no process has the device open"
                          : rc == EPROTO ? "not a fabric of this softib version"
                                         : strerror(rc);

        if (mode == LIST) {
            printf("%s\t(%s)\n", path, why);
            return 0;
        }
        fprintf(stderr, "softib-info: no fabric at %s (%s)\n", path, why);
        return 1;
    }
    if (mode == GC) {
        rc = gc(&f);
    } else if (mode == LIST) {
        uint32_t live = live_contexts(&f);

        printf("%s\t%u live context%s\n", path, live, live == 1 ? "" : "s");
    } else {
        print_port(&f);
        print_contexts(&f);
        print_qps(&f);
        if (verbose)
            print_verbose(&f);
        if (counters)
            print_counters(&f);
    }
    sib_fabric_unmap(&f);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"fabric", required_argument, NULL, 'f'},
        {"list", no_argument, NULL, 'l'},
        {"verbose", no_argument, NULL, 'v'},
        {"counters", no_argument, NULL, 'c'},
        {"gc", no_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    bool verbose = false, counters = false;
    enum mode mode = SHOW;
    char *paths[256];
    const char *name;
    int o, n, rc = 0;

    while ((o = getopt_long(argc, argv, "f:lvch", opts, NULL)) != -1) {
        switch (o) {
        case 'f':
            setenv("SOFTIB_FABRIC", fabric_name_of(optarg), 1);
            break;
        case 'l':
            mode = LIST;
            break;
        case 'v':
            verbose = true;
            break;
        case 'c':
            counters = true;
            break;
        case 'g':
            mode = GC;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("softib-info (ARMCI-ODCM softib) %s\n", SOFTIB_INFO_VERSION);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (sib_knobs_load())
        return 2;
    name = getenv("SOFTIB_FABRIC");
    if (name && *name)
        return one(sib_knobs.fabric_path, mode, verbose, counters);
    n = our_fabrics(paths, (int)(sizeof(paths) / sizeof(paths[0])));
    if (n == 0) {
        fprintf(stderr,
                "softib-info: no fabric of uid %u in " SIB_FABRIC_DIR
                " (no process has the device open)\n",
                (unsigned)geteuid());
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (mode == SHOW && n > 1)
            printf("%s==== %s\n", i ? "\n" : "", paths[i]);
        rc |= one(paths[i], mode, verbose, counters);
        free(paths[i]);
    }
    return rc;
}
