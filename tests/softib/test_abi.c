/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The contract with the runtime: libsoftib.so.0 loads with
 * RTLD_NOW|RTLD_LOCAL, every entry point the runtime dlsym()s is there
 * under the rdma-core name, nothing internal leaks out, the context is an
 * extended verbs_context (so verbs.h's inline ibv_query_port works), and
 * softib_get_counters is reachable with RTLD_NOLOAD.
 */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const names[] = {
    "ibv_get_device_list",
    "ibv_free_device_list",
    "ibv_get_device_name",
    "ibv_get_device_guid",
    "ibv_open_device",
    "ibv_close_device",
    "ibv_query_device",
    "ibv_query_port",
    "ibv_query_gid",
    "ibv_query_pkey",
    "ibv_alloc_pd",
    "ibv_dealloc_pd",
    "ibv_reg_mr",
    "ibv_reg_mr_iova2",
    "ibv_dereg_mr",
    "ibv_create_comp_channel",
    "ibv_destroy_comp_channel",
    "ibv_create_cq",
    "ibv_destroy_cq",
    "ibv_get_cq_event",
    "ibv_ack_cq_events",
    "ibv_create_qp",
    "ibv_modify_qp",
    "ibv_query_qp",
    "ibv_destroy_qp",
    "ibv_create_srq",
    "ibv_modify_srq",
    "ibv_query_srq",
    "ibv_destroy_srq",
    "ibv_create_ah",
    "ibv_destroy_ah",
    "ibv_get_async_event",
    "ibv_ack_async_event",
    "ibv_wc_status_str",
    "ibv_event_type_str",
    "ibv_port_state_str",
    "ibv_node_type_str",
    "ibv_fork_init",
    "softib_get_counters",
    "softib_fabric_stats",
};

/* A process whose environment is wrong learns it from ibv_get_device_list. */
static void bad_knob(int fd, void *arg)
{
    const char **kv = arg;
    int n = 1;
    (void)fd;

    setenv(kv[0], kv[1], 1);
    errno = 0;
    CHECK(!ibv_get_device_list(&n) && errno == EINVAL && n == 0, "%s=%s is refused", kv[0], kv[1]);
}

/* The cost model and the wire model change timing, never results. */
static void models(int fd, void *arg)
{
    struct t_dev d;
    struct ibv_cq *cq;
    struct ibv_qp *a, *b;
    struct t_addr aa, ba;
    char *buf = t_alloc(4096);
    struct ibv_mr *mr;
    (void)fd;
    (void)arg;

    setenv("SOFTIB_COST_MODEL", "paper", 1);
    setenv("SOFTIB_WIRE_LATENCY_US", "200", 1);
    setenv("SOFTIB_WIRE_MBPS", "1000", 1);
    t_dev_open(&d);
    cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
    mr = ibv_reg_mr(d.pd, buf, 4096, T_ACCESS_ALL);
    REQUIRE(cq && mr, "setup");
    a = t_qp(&d, cq, IBV_QPT_RC, 4, NULL);
    b = t_qp(&d, cq, IBV_QPT_RC, 4, NULL);
    t_addr_of(&d, a, &aa);
    t_addr_of(&d, b, &ba);
    REQUIRE(t_rc_connect(&d, a, &ba, T_ACCESS_ALL) == 0 &&
                t_rc_connect(&d, b, &aa, T_ACCESS_ALL) == 0,
            "connect under the paper cost model");
    t_fill(buf, 1000, 3);
    CHECK(t_post_send(a, IBV_WR_RDMA_WRITE, buf, 1000, mr->lkey, (uintptr_t)buf + 2000, mr->rkey,
                      IBV_SEND_SIGNALED, 1) == 0,
          "write");
    t_expect(cq, IBV_WC_SUCCESS, 1, "write completes after the modeled wire delay");
    CHECK(t_same(buf + 2000, 1000, 3), "and lands");
    CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0 && ibv_destroy_cq(cq) == 0 &&
              ibv_dereg_mr(mr) == 0,
          "teardown");
    free(buf);
    t_dev_close(&d);
}

static void knobs(void)
{
    static const char *bad[][2] = {
        {"SOFTIB_UD_LOSS", "2"},    {"SOFTIB_MTU", "1000"},        {"SOFTIB_LINK_LAYER", "fddi"},
        {"SOFTIB_FABRIC", "a/b"},   {"SOFTIB_COST_MODEL", "fast"}, {"SOFTIB_DEFERRED", "yes"},
        {"SOFTIB_WIRE_MBPS", "-1"},
    };
    struct t_child c;

    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        c = t_spawn(bad_knob, (void *)bad[i]);
        t_join(&c);
    }
    c = t_spawn(models, NULL);
    t_join(&c);
}

/* softib-info (path in $SOFTIB_INFO, set by meson) lists this process. */
static void info_shows_us(void)
{
    const char *tool = getenv("SOFTIB_INFO");
    char cmd[512], line[256], pid[32];
    bool dev = false, me = false;
    FILE *p;

    if (!tool) {
        t_skip("softib-info (SOFTIB_INFO not set)");
        return;
    }
    snprintf(cmd, sizeof(cmd), "%s -v -c", tool);
    snprintf(pid, sizeof(pid), " %d ", (int)getpid());
    p = popen(cmd, "r");
    REQUIRE(p, "popen");
    while (fgets(line, sizeof(line), p)) {
        dev |= strstr(line, "softib0") != NULL;
        me |= strstr(line, pid) != NULL && strstr(line, "alive") != NULL;
    }
    CHECK(pclose(p) == 0 && dev && me, "softib-info shows the device and this live process");
}

int main(void)
{
    void *h;
    struct ibv_device **(*get_list)(int *);
    struct ibv_context *(*open_dev)(struct ibv_device *);
    int (*close_dev)(struct ibv_context *);
    void (*free_list)(struct ibv_device **);
    struct ibv_device **list;
    struct ibv_context *ctx;
    struct ibv_port_attr pa;
    struct softib_counters c;
    int n = 0;

    if (!t_softib()) {
        t_skip("softib's ABI (this build uses rdma-core)");
        return t_summary();
    }
    h = dlopen("libsoftib.so.0", RTLD_NOW | RTLD_LOCAL);
    REQUIRE(h, "dlopen(libsoftib.so.0): %s", dlerror());
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        CHECK(dlsym(h, names[i]) != NULL, "%s is exported", names[i]);
    CHECK(!dlsym(h, "sib_cq_push") && !dlsym(h, "sib_fab"), "internals stay hidden");
    CHECK(dlopen("libsoftib.so.0", RTLD_NOLOAD | RTLD_NOW) != NULL, "RTLD_NOLOAD finds it");

    get_list = (struct ibv_device * *(*)(int *)) dlsym(h, "ibv_get_device_list");
    open_dev = (struct ibv_context * (*)(struct ibv_device *)) dlsym(h, "ibv_open_device");
    close_dev = (int (*)(struct ibv_context *))dlsym(h, "ibv_close_device");
    free_list = (void (*)(struct ibv_device **))dlsym(h, "ibv_free_device_list");
    list = get_list(&n);
    REQUIRE(list && n == 1, "one device");
    ctx = open_dev(list[0]);
    free_list(list);
    REQUIRE(ctx, "open through dlsym");
    CHECK(verbs_get_ctx(ctx) != NULL && verbs_get_ctx_op(ctx, query_port) != NULL,
          "an extended verbs_context with query_port");
    CHECK(ctx->ops.post_send && ctx->ops.post_recv && ctx->ops.poll_cq && ctx->ops.req_notify_cq &&
              ctx->ops.post_srq_recv,
          "hot-path ops for verbs.h's inline functions");
    CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE, "inline query_port");
    CHECK(t_counters(&c) == 0 && c.version == SOFTIB_COUNTERS_VERSION && c.size == sizeof(c) &&
              c.contexts_opened == 1,
          "softib_get_counters");
    c.size = 4;
    CHECK(((int (*)(struct softib_counters *))dlsym(h, "softib_get_counters"))(&c) != 0,
          "a too-small size is refused");
    info_shows_us();
    CHECK(close_dev(ctx) == 0, "close");
    dlclose(h);
    knobs();
    CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
