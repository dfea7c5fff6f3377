#include "verbs/device.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "verbs/provider.h"

/* The vendor ids the kernel's software devices report (rxe_param.h, siw.h). */
#define RXE_VENDOR_ID 0xffffff
#define SIW_VENDOR_ID 0x626d74

struct verbs_device vdev;

static enum device_kind device_kind_of(const char *provider, const struct ibv_device_attr *attr)
{
    if (!strcmp(provider, "softib"))
        return DEVICE_SOFTIB;
    if (attr->vendor_id == RXE_VENDOR_ID || attr->vendor_id == SIW_VENDOR_ID)
        return DEVICE_KERNEL;
    return DEVICE_HCA;
}

static bool gid_is_zero(const union ibv_gid *gid)
{
    static const uint8_t zero[16];
    return !memcmp(gid->raw, zero, sizeof(zero));
}

/* ::ffff:a.b.c.d — the RoCEv2 GID of an IPv4 address, routable across subnets. */
static bool gid_is_ipv4_mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(gid->raw, prefix, sizeof(prefix));
}

static int choose_gid_index(const struct ibv_port_attr *pattr)
{
    if (cfg.gid_index >= 0)
        return cfg.gid_index;
    int fallback = -1;
    for (int i = 0; i < pattr->gid_tbl_len; i++) {
        union ibv_gid gid;
        if (ibv_query_gid(vdev.ctx, vdev.port, i, &gid) || gid_is_zero(&gid))
            continue;
        if (gid_is_ipv4_mapped(&gid))
            return i;
        if (fallback < 0)
            fallback = i;
    }
    return fallback;
}

/*
 * Opens the device to use: ARMCI_IB_DEVICE, or the first with the port
 * active. The context that answered the port query is the one kept: closing
 * it and opening the device again costs a second open (for softib, leaving
 * and joining its fabric under the fabric's file lock, which every process
 * of the node takes in turn).
 */
static struct ibv_context *open_device(struct ibv_device **list, int n)
{
    for (int i = 0; i < n; i++) {
        if (cfg.device && strcmp(ibv_get_device_name(list[i]), cfg.device))
            continue;
        struct ibv_context *ctx = ibv_open_device(list[i]);
        if (!ctx) {
            if (cfg.device)
                armci_die("ARMCI_Init", "ibv_open_device(%s) failed: %s", cfg.device,
                          strerror(errno));
            continue;
        }
        struct ibv_port_attr pattr;
        bool active =
            !ibv_query_port(ctx, (uint8_t)cfg.port, &pattr) && pattr.state == IBV_PORT_ACTIVE;
        if (active) {
            snprintf(vdev.name, sizeof(vdev.name), "%s", ibv_get_device_name(list[i]));
            return ctx;
        }
        ibv_close_device(ctx);
        if (cfg.device)
            armci_die("ARMCI_Init", "verbs device %s port %d is not active", cfg.device, cfg.port);
    }
    if (cfg.device) {
        char names[512] = "";
        for (int i = 0; i < n; i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                     ibv_get_device_name(list[i]));
        armci_die("ARMCI_Init",
                  "ARMCI_IB_DEVICE=%s: no such verbs device; the devices here are: %s (unset "
                  "ARMCI_IB_DEVICE to take the first with an active port)",
                  cfg.device, names);
    }
    armci_die("ARMCI_Init",
              "no verbs device has port %d active (ARMCI_IB_PORT selects another port; "
              "`ibv_devinfo` shows each port's state)",
              cfg.port);
}

void verbs_device_open(void)
{
    vdev.provider = verbs_provider_load(cfg.verbs);
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || n == 0)
        armci_die("ARMCI_Init",
                  "ibv_get_device_list (%s) found no device (%s): no RDMA device is visible on "
                  "this host (is its kernel driver loaded? `ibv_devices` lists them); unset "
                  "ARMCI_VERBS or set ARMCI_VERBS=softib to run over shared memory on one machine",
                  vdev.provider, strerror(errno));
    vdev.ctx = open_device(list, n);
    ibv_free_device_list(list);
    if (ibv_query_device(vdev.ctx, &vdev.attr))
        armci_die("ARMCI_Init", "ibv_query_device(%s) failed: %s", vdev.name, strerror(errno));
    vdev.kind = device_kind_of(vdev.provider, &vdev.attr);

    vdev.port = (uint8_t)cfg.port;
    struct ibv_port_attr pattr;
    if (ibv_query_port(vdev.ctx, vdev.port, &pattr))
        armci_die("ARMCI_Init", "ibv_query_port(%s, %d) failed: %s", vdev.name, vdev.port,
                  strerror(errno));
    vdev.lid = pattr.lid;
    vdev.mtu = pattr.active_mtu;
    vdev.use_grh = pattr.link_layer == IBV_LINK_LAYER_ETHERNET || cfg.gid_index >= 0;
    vdev.gid_index = vdev.use_grh ? choose_gid_index(&pattr) : -1;
    if (vdev.use_grh) {
        if (vdev.gid_index < 0)
            armci_die("ARMCI_Init", "device %s port %d has no usable GID (RoCE needs one)",
                      vdev.name, vdev.port);
        if (ibv_query_gid(vdev.ctx, vdev.port, vdev.gid_index, &vdev.gid))
            armci_die("ARMCI_Init", "ibv_query_gid(%s, %d, %d) failed: %s", vdev.name, vdev.port,
                      vdev.gid_index, strerror(errno));
    }

    /* Asynchronous events are looked at between completions, never waited for alone. */
    int flags = fcntl(vdev.ctx->async_fd, F_GETFL);
    if (flags < 0 || fcntl(vdev.ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
        armci_die("ARMCI_Init", "fcntl(O_NONBLOCK) on the async event fd of %s failed: %s",
                  vdev.name, strerror(errno));

    vdev.pd = ibv_alloc_pd(vdev.ctx);
    if (!vdev.pd)
        armci_die("ARMCI_Init", "ibv_alloc_pd(%s) failed: %s", vdev.name, strerror(errno));

    const char *kind = vdev.kind == DEVICE_KERNEL ? " (software: the kernel does its work)" : "";
    if (vdev.use_grh)
        armci_log("verbs provider %s: device %s%s port %d, addressing by GID index %d (RoCE)",
                  vdev.provider, vdev.name, kind, vdev.port, vdev.gid_index);
    else
        armci_log("verbs provider %s: device %s%s port %d, addressing by LID %u (InfiniBand)",
                  vdev.provider, vdev.name, kind, vdev.port, vdev.lid);
}

bool verbs_next_async_event(struct ibv_async_event *ev)
{
    struct pollfd p = {.fd = vdev.ctx->async_fd, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
        return false;
    if (ibv_get_async_event(vdev.ctx, ev) == 0)
        return true;
    if (errno != EAGAIN && errno != EINTR)
        armci_warn("ibv_get_async_event (%s) failed: %s", vdev.name, strerror(errno));
    return false;
}

enum ibv_port_state verbs_port_state(void)
{
    struct ibv_port_attr pattr;
    if (!vdev.ctx || ibv_query_port(vdev.ctx, vdev.port, &pattr))
        return IBV_PORT_ACTIVE;
    return pattr.state;
}

void verbs_device_close(void)
{
    if (vdev.pd && ibv_dealloc_pd(vdev.pd))
        armci_warn("ibv_dealloc_pd failed: %s", strerror(errno));
    if (vdev.ctx && ibv_close_device(vdev.ctx))
        armci_warn("ibv_close_device failed: %s", strerror(errno));
    verbs_provider_unload();
    vdev = (struct verbs_device){0};
}

struct verbs_addr verbs_my_addr(uint32_t qpn, uint32_t psn)
{
    struct verbs_addr a = {.lid = vdev.lid, .qpn = qpn, .psn = psn};
    memcpy(a.gid, vdev.gid.raw, sizeof(a.gid));
    return a;
}

void verbs_fill_ah_attr(struct ibv_ah_attr *ah, const struct verbs_addr *peer)
{
    memset(ah, 0, sizeof(*ah));
    ah->dlid = peer->lid;
    ah->port_num = vdev.port;
    if (vdev.use_grh) {
        ah->is_global = 1;
        ah->grh.sgid_index = (uint8_t)vdev.gid_index;
        ah->grh.hop_limit = 64;
        memcpy(ah->grh.dgid.raw, peer->gid, sizeof(peer->gid));
    }
}

void verbs_destroy_srq(struct ibv_srq *srq, const char *who)
{
    if (srq && ibv_destroy_srq(srq))
        armci_warn("ibv_destroy_srq (%s) failed: %s", who, strerror(errno));
}

void verbs_destroy_cq(struct ibv_cq *cq, const char *who)
{
    if (cq && ibv_destroy_cq(cq))
        armci_warn("ibv_destroy_cq (%s) failed: %s", who, strerror(errno));
}

void verbs_destroy_channel(struct ibv_comp_channel *ch, const char *who)
{
    if (ch && ibv_destroy_comp_channel(ch))
        armci_warn("ibv_destroy_comp_channel (%s) failed: %s", who, strerror(errno));
}
