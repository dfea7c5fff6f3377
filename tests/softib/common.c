/* SPDX-License-Identifier: BSD-3-Clause */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int t_passed, t_failed, t_skipped;

void t_check(bool ok, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    if (ok) {
        t_passed++;
        return;
    }
    t_failed++;
    fprintf(stderr, "FAIL [%d] %s:%d: ", (int)getpid(), file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));
}

void t_skip(const char *what)
{
    t_skipped++;
    printf("skip: %s\n", what);
}

static int child_fd = -1;

void t_abort(void)
{
    if (child_fd >= 0)
        _exit(1); /* the parent sees a child that did not report: a failure */
    t_summary();
    exit(1);
}

int t_summary(void)
{
    printf("%d passed, %d failed", t_passed, t_failed);
    if (t_skipped)
        printf(", %d skipped", t_skipped);
    printf("\n");
    fflush(stdout);
    return t_failed ? 1 : 0;
}

/* ---- environment ---- */

bool t_softib(void)
{
    return dlsym(RTLD_DEFAULT, "softib_get_counters") != NULL;
}

bool t_slow(void)
{
    return getenv("RXE_VM") != NULL;
}

double t_timeout(void)
{
    return t_slow() ? 60.0 : 20.0;
}

int t_counters(struct softib_counters *c)
{
    int (*fn)(struct softib_counters *) =
        (int (*)(struct softib_counters *))dlsym(RTLD_DEFAULT, "softib_get_counters");

    memset(c, 0, sizeof(*c));
    c->size = sizeof(*c);
    return fn ? fn(c) : ENOSYS;
}

int t_fabric_stats(struct softib_fabric_stats *st)
{
    int (*fn)(struct softib_fabric_stats *) =
        (int (*)(struct softib_fabric_stats *))dlsym(RTLD_DEFAULT, "softib_fabric_stats");

    memset(st, 0, sizeof(*st));
    st->size = sizeof(*st);
    return fn ? fn(st) : ENOSYS;
}

static char fabric_path[256]; /* the file we saw mapped, if any */

bool t_fabric_path(char *path, size_t len)
{
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    bool found = false;

    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "/dev/shm/softib-fabric-");

        if (p) {
            p[strcspn(p, " \n")] = '\0';
            snprintf(path, len, "%s", p);
            found = true;
        }
    }
    fclose(f);
    return found;
}

bool t_fabric_file_gone(void)
{
    const char *name = getenv("SOFTIB_FABRIC");
    char path[256];

    /* the default name depends on the launcher: trust what was mapped */
    if (fabric_path[0])
        snprintf(path, sizeof(path), "%s", fabric_path);
    else if (name && *name)
        snprintf(path, sizeof(path), "/dev/shm/softib-fabric-%s", name);
    else
        snprintf(path, sizeof(path), "/dev/shm/softib-fabric-%u", (unsigned)getuid());
    return access(path, F_OK) != 0;
}

double t_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- device ---- */

static int find_gid(struct t_dev *d)
{
    static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    if (!d->roce)
        return 0;
    /* RoCEv2 over IPv4, as both rxe and softib offer at index 1 */
    for (int i = 0; i < d->port.gid_tbl_len && i < 16; i++) {
        union ibv_gid g;

        if (!ibv_query_gid(d->ctx, 1, i, &g) && !memcmp(g.raw, v4, sizeof(v4)))
            return i;
    }
    return 0;
}

void t_dev_open(struct t_dev *d)
{
    struct ibv_device **list;
    int n = 0;

    memset(d, 0, sizeof(*d));
    list = ibv_get_device_list(&n);
    REQUIRE(list && n > 0, "ibv_get_device_list found no device");
    d->ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    REQUIRE(d->ctx, "ibv_open_device");
    if (!fabric_path[0])
        t_fabric_path(fabric_path, sizeof(fabric_path));
    REQUIRE(!ibv_query_port(d->ctx, 1, &d->port), "ibv_query_port");
    d->roce = d->port.link_layer == IBV_LINK_LAYER_ETHERNET;
    d->gid_index = find_gid(d);
    REQUIRE(!ibv_query_gid(d->ctx, 1, d->gid_index, &d->gid), "ibv_query_gid");
    d->pd = ibv_alloc_pd(d->ctx);
    REQUIRE(d->pd, "ibv_alloc_pd");
}

void t_dev_close(struct t_dev *d)
{
    if (d->pd)
        CHECK(ibv_dealloc_pd(d->pd) == 0, "ibv_dealloc_pd");
    if (d->ctx)
        CHECK(ibv_close_device(d->ctx) == 0, "ibv_close_device");
    memset(d, 0, sizeof(*d));
}

void t_addr_of(const struct t_dev *d, const struct ibv_qp *qp, struct t_addr *a)
{
    memset(a, 0, sizeof(*a));
    a->qpn = qp ? qp->qp_num : 0;
    a->psn = a->qpn * 7 & 0xffffff; /* something other than 0, to catch PSN mix-ups */
    a->lid = d->port.lid;
    a->gid = d->gid;
}

void t_av(const struct t_dev *d, const struct t_addr *peer, struct ibv_ah_attr *av)
{
    memset(av, 0, sizeof(*av));
    av->port_num = 1;
    av->dlid = peer->lid;
    if (d->roce) {
        av->is_global = 1;
        av->grh.dgid = peer->gid;
        av->grh.sgid_index = (uint8_t)d->gid_index;
        av->grh.hop_limit = 1;
    }
}

struct ibv_qp *t_qp(const struct t_dev *d, struct ibv_cq *cq, enum ibv_qp_type type, int depth,
                    struct ibv_srq *srq)
{
    struct ibv_qp_init_attr a = {
        .send_cq = cq,
        .recv_cq = cq,
        .srq = srq,
        .qp_type = type,
        .cap = {.max_send_wr = (uint32_t)depth,
                .max_recv_wr = (uint32_t)depth,
                .max_send_sge = 4,
                .max_recv_sge = 4,
                .max_inline_data = 64},
    };
    struct ibv_qp *qp = ibv_create_qp(d->pd, &a);

    REQUIRE(qp, "ibv_create_qp(type %d, depth %d)", type, depth);
    return qp;
}

int t_rc_init(struct ibv_qp *qp, int access)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access};

    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int t_rc_rtr(const struct t_dev *d, struct ibv_qp *qp, const struct t_addr *peer, int min_rnr)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = IBV_MTU_1024,
        .dest_qp_num = peer->qpn,
        .rq_psn = peer->psn,
        .max_dest_rd_atomic = 4,
        .min_rnr_timer = (uint8_t)min_rnr,
    };

    t_av(d, peer, &a.ah_attr);
    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int t_rc_rts(struct ibv_qp *qp, uint32_t psn, int timeout, int retry, int rnr_retry)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTS,
        .sq_psn = psn,
        .timeout = (uint8_t)timeout,
        .retry_cnt = (uint8_t)retry,
        .rnr_retry = (uint8_t)rnr_retry,
        .max_rd_atomic = 4,
    };

    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                             IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

int t_rc_connect(const struct t_dev *d, struct ibv_qp *qp, const struct t_addr *peer, int access)
{
    struct t_addr me;
    int rc;

    t_addr_of(d, qp, &me);
    rc = t_rc_init(qp, access);
    if (!rc)
        rc = t_rc_rtr(d, qp, peer, 12);
    if (!rc)
        rc = t_rc_rts(qp, me.psn, 14, 7, 7);
    return rc;
}

int t_ud_ready(struct ibv_qp *qp, uint32_t qkey)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey};
    int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);

    a.qp_state = IBV_QPS_RTR;
    if (!rc)
        rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    if (!rc)
        rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
    return rc;
}

bool t_poll(struct ibv_cq *cq, struct ibv_wc *wc)
{
    double t0 = t_now();

    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);

        if (n == 1)
            return true;
        if (n < 0 || t_now() - t0 > t_timeout())
            return false;
        if (t_slow())
            usleep(100);
    }
}

bool t_expect(struct ibv_cq *cq, enum ibv_wc_status st, uint64_t wr_id, const char *what)
{
    struct ibv_wc wc;
    bool ok;

    if (!t_poll(cq, &wc)) {
        CHECK(false, "%s: no completion", what);
        return false;
    }
    ok = wc.status == st && (!wr_id || wc.wr_id == wr_id);
    CHECK(ok, "%s: got status %d (%s) wr_id %llu, expected %d (%s) wr_id %llu", what, wc.status,
          ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id, st, ibv_wc_status_str(st),
          (unsigned long long)wr_id);
    return ok;
}

bool t_quiet(struct ibv_cq *cq, double seconds)
{
    double t0 = t_now();
    struct ibv_wc wc;

    while (t_now() - t0 < seconds) {
        if (ibv_poll_cq(cq, 1, &wc) != 0)
            return false;
        usleep(1000);
    }
    return true;
}

int t_post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf, uint32_t len, uint32_t lkey,
                uint64_t raddr, uint32_t rkey, unsigned flags, uint64_t wr_id)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = op,
                             .send_flags = flags,
                             .imm_data = htobe32(0xabc0de)},
                       *bad;

    if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
        wr.wr.atomic.remote_addr = raddr;
        wr.wr.atomic.rkey = rkey;
    } else {
        wr.wr.rdma.remote_addr = raddr;
        wr.wr.rdma.rkey = rkey;
    }
    return ibv_post_send(qp, &wr, &bad);
}

int t_post_recv(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey, uint64_t wr_id)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
    struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;

    return ibv_post_recv(qp, &wr, &bad);
}

struct ibv_qp_attr t_query(struct ibv_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr i;

    memset(&a, 0, sizeof(a));
    if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
        a.qp_state = (enum ibv_qp_state) - 1;
    return a;
}

/* ---- processes ---- */

struct t_child t_spawn(void (*fn)(int fd, void *arg), void *arg)
{
    struct t_child c = {.pid = -1, .fd = -1};
    int sv[2];

    fflush(stdout);
    fflush(stderr);
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    c.pid = fork();
    REQUIRE(c.pid >= 0, "fork");
    if (c.pid == 0) {
        int r[3];

        close(sv[0]);
        child_fd = sv[1];
        t_passed = t_failed = t_skipped = 0;
        alarm(t_slow() ? 600 : 60); /* a hung child must not hang the suite */
        fn(sv[1], arg);
        r[0] = t_passed;
        r[1] = t_failed;
        r[2] = t_skipped;
        (void)!write(sv[1], r, sizeof(r));
        fflush(stdout);
        _exit(t_failed ? 1 : 0);
    }
    close(sv[1]);
    c.fd = sv[0];
    return c;
}

void t_join(struct t_child *c)
{
    int r[3] = {0, 0, 0}, status = 0;
    ssize_t got = 0, n;

    /* the child's last message is its result counts; earlier bytes were
     * protocol messages the parent already consumed */
    while (got < (ssize_t)sizeof(r) && (n = read(c->fd, (char *)r + got, sizeof(r) - got)) > 0)
        got += n;
    waitpid(c->pid, &status, 0);
    close(c->fd);
    t_passed += r[0];
    t_failed += r[1];
    t_skipped += r[2];
    CHECK(got == (ssize_t)sizeof(r) && WIFEXITED(status), "child %d ended abnormally (status %#x)",
          (int)c->pid, status);
    c->pid = -1;
}

void t_send(int fd, const void *buf, size_t len)
{
    ssize_t n = write(fd, buf, len);

    REQUIRE(n == (ssize_t)len, "t_send");
}

void t_recv(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);

        REQUIRE(n > 0, "t_recv: peer gone");
        got += (size_t)n;
    }
}

void t_sync(int fd)
{
    char b = 's';

    t_send(fd, &b, 1);
    t_recv(fd, &b, 1);
    REQUIRE(b == 's', "t_sync: out of step with the peer");
}

static void on_usr1(int sig)
{
    (void)sig;
}

void t_catch_usr1(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
}

/* blocked in clock_nanosleep or nanosleep, by /proc/<pid>/syscall */
bool t_in_sleep(pid_t pid)
{
    char path[64];
    long nr = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return false;
    if (fscanf(f, "%ld", &nr) != 1)
        nr = -1;
    fclose(f);
    return nr == SYS_clock_nanosleep || nr == SYS_nanosleep;
}

void t_wait_asleep(pid_t pid)
{
    double t0 = t_now();

    while (!t_in_sleep(pid) && t_now() - t0 < 10)
        usleep(1000);
    CHECK(t_in_sleep(pid), "the target is blocked in sleep()");
}

void t_fill(void *buf, size_t len, unsigned seed)
{
    uint8_t *p = buf;

    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)((i * 131u + seed * 17u + (i >> 8)) ^ (seed >> 3));
}

bool t_same(const void *buf, size_t len, unsigned seed)
{
    const uint8_t *p = buf;

    for (size_t i = 0; i < len; i++)
        if (p[i] != (uint8_t)((i * 131u + seed * 17u + (i >> 8)) ^ (seed >> 3)))
            return false;
    return true;
}

void *t_alloc(size_t len)
{
    void *p = NULL;

    REQUIRE(posix_memalign(&p, 4096, len ? len : 1) == 0, "posix_memalign(%zu)", len);
    memset(p, 0, len);
    return p;
}
