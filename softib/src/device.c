/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device and its one port: device list, open/close of a context
 * (joining the fabric, what is declared to Yama), device/port/GID/P_Key
 * queries. A context's QPs are destroyed by verbs.c before it closes.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sib.h"

static struct ibv_device sib_device = {
    .node_type = IBV_NODE_CA,
    .transport_type = IBV_TRANSPORT_IB,
    .name = "softib0",
    .dev_name = "usoftib0",
    .dev_path = "/sys/class/infiniband_verbs/usoftib0",
    .ibdev_path = "/sys/class/infiniband/softib0",
};

/* ---- device list ---- */

struct ibv_device **sib_get_device_list(int *num_devices)
{
    struct ibv_device **list;

    if (num_devices)
        *num_devices = 0;
    if (sib_knobs_load())
        return sib_null(EINVAL);
    list = calloc(2, sizeof(*list));
    if (!list)
        return sib_null(ENOMEM);
    list[0] = &sib_device;
    if (num_devices)
        *num_devices = 1;
    return list;
}

void sib_free_device_list(struct ibv_device **list)
{
    free(list);
}

const char *sib_get_device_name(struct ibv_device *device)
{
    return device ? device->name : sib_null(EINVAL);
}

static uint64_t node_guid(void)
{
    return 0x02536f6674000000ull; /* 02:"Soft":00:00:00, locally administered */
}

__be64 sib_get_device_guid(struct ibv_device *device)
{
    if (device != &sib_device) {
        errno = EINVAL;
        return 0;
    }
    return htobe64(node_guid());
}

/* ---- open / close ---- */

/* Yama's ptrace_scope, or -1 when Yama is absent. */
static int yama_scope(void)
{
    char buf[16] = "";
    ssize_t n;
    int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 ? atoi(buf) : -1;
}

/*
 * Peers move data in and out of us with process_vm_readv/writev, which
 * needs ptrace access. Between processes of one uid the kernel grants it,
 * unless Yama's ptrace_scope is 1: then only an ancestor, or a process we
 * name with PR_SET_PTRACER (and its descendants), may. We name our parent
 * (the launcher's daemon, or the process that fork()ed the job), which
 * covers our siblings and nothing outside that tree; SOFTIB_PTRACER=any
 * allows every process of the uid, as CMA-based MPI transports do. At 0 or
 * without Yama nothing is needed and nothing is done; at 2 and 3 nothing
 * can be done without CAP_SYS_PTRACE. Once per process (a fork()ed child
 * has no declaration of its own).
 */
static void allow_peers(void)
{
    static pid_t done_pid;
    unsigned long tracer;
    int scope;

    if (done_pid == getpid())
        return;
    done_pid = getpid();
    scope = yama_scope();
    if (scope <= 0)
        return;
    if (scope >= 2) {
        fprintf(stderr,
                "softib: Yama ptrace_scope=%d: moving data between processes needs "
                "CAP_SYS_PTRACE; transfers to other processes will fail\n",
                scope);
        return;
    }
    tracer = sib_knobs.ptracer_any ? (unsigned long)PR_SET_PTRACER_ANY : (unsigned long)getppid();
    if (prctl(PR_SET_PTRACER, tracer, 0, 0, 0))
        fprintf(stderr, "softib: PR_SET_PTRACER: %s\n", strerror(errno));
    else if (sib_knobs.ptracer_any)
        fprintf(stderr,
                "softib: Yama ptrace_scope=1 and SOFTIB_PTRACER=any: every process of uid %u "
                "may now read and write process %d\n",
                (unsigned)getuid(), (int)getpid());
}

/* SOFTIB_PORT_DOWN: when this context's port will be down (never, without the knob). */
static void port_down_window(struct sib_fctx *fc)
{
    uint64_t from = 0, until = 0;

    if (sib_knobs.port_down_for_ms) {
        from = sib_now_ns() + (uint64_t)sib_knobs.port_down_at_ms * 1000000 + 1;
        until = from + (uint64_t)sib_knobs.port_down_for_ms * 1000000;
        __atomic_store_n(&sib_fab.hdr->ports_go_down, 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&fc->down_until_ns, until, __ATOMIC_RELEASE);
    __atomic_store_n(&fc->down_from_ns, from, __ATOMIC_RELEASE);
}

void sib_port_watch(struct sib_context *ctx)
{
    const struct sib_fctx *fc = ctx->f;
    uint64_t from = __atomic_load_n(&fc->down_from_ns, __ATOMIC_ACQUIRE);
    uint8_t told = __atomic_load_n(&ctx->port_told, __ATOMIC_ACQUIRE);
    uint64_t now;

    if (!from || told == 2)
        return;
    now = sib_now_ns();
    if (told == 0 && now >= from &&
        __atomic_compare_exchange_n(&ctx->port_told, &told, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        sib_async_post(ctx->slot, IBV_EVENT_PORT_ERR, 0, 1, 0);
    told = __atomic_load_n(&ctx->port_told, __ATOMIC_ACQUIRE);
    if (told == 1 && now >= __atomic_load_n(&fc->down_until_ns, __ATOMIC_ACQUIRE) &&
        __atomic_compare_exchange_n(&ctx->port_told, &told, 2, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        sib_async_post(ctx->slot, IBV_EVENT_PORT_ACTIVE, 0, 1, 0);
}

struct ibv_context *sib_open_device(struct ibv_device *device)
{
    struct sib_context *ctx;
    struct sib_fctx *fc;
    struct sib_addr addr;
    int fd, rc;

    if (device != &sib_device)
        return sib_null(EINVAL);
    if (sib_knobs_load())
        return sib_null(EINVAL);
    ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return sib_null(ENOMEM);
    fd = sib_sock_open(&addr);
    if (fd < 0) {
        free(ctx);
        return sib_null(-fd);
    }
    pthread_mutex_lock(&sib_open_lock);
    rc = sib_fabric_join(&sib_fab, sib_knobs.fabric_path, &ctx->slot);
    if (rc) {
        pthread_mutex_unlock(&sib_open_lock);
        close(fd);
        free(ctx);
        return sib_null(rc);
    }
    fc = sib_fctx_at(&sib_fab, ctx->slot);
    sib_lock(&fc->ev_lock);
    fc->async_addr = addr;
    sib_unlock(&fc->ev_lock);
    port_down_window(fc);
    ctx->f = fc;
    ctx->gen = fc->gen;
    ctx->lid = (uint16_t)fc->lid;
    ctx->pid = getpid();
    ctx->next_open = sib_open_list;
    sib_open_list = ctx;
    allow_peers();
    pthread_mutex_unlock(&sib_open_lock);

    sib_obj_init(&ctx->o, SIB_K_CTX, ctx);
    pthread_mutex_init(&ctx->lock, NULL);
    ctx->vctx.context.device = device;
    ctx->vctx.context.cmd_fd = -1;
    ctx->vctx.context.async_fd = fd;
    ctx->vctx.context.num_comp_vectors = 1;
    pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
    ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
    ctx->vctx.sz = sizeof(ctx->vctx);
    SIB_COUNT(fc, contexts_opened, 1);
    return &ctx->vctx.context;
}

static void unlink_open(struct sib_context *ctx)
{
    struct sib_context **pp;

    for (pp = &sib_open_list; *pp; pp = &(*pp)->next_open) {
        if (*pp == ctx) {
            *pp = ctx->next_open;
            return;
        }
    }
}

void sib_ctx_close(struct sib_context *ctx)
{
    struct sib_obj *o;

    pthread_mutex_lock(&sib_open_lock);
    unlink_open(ctx);
    if (ctx->pid == getpid()) {
        sib_counters_retire(ctx->f);
        sib_fabric_leave(&sib_fab, ctx->slot);
        if (sib_fab.refs == 0)
            sib_peers_forget();
    }
    pthread_mutex_unlock(&sib_open_lock);
    close(ctx->vctx.context.async_fd);
    while ((o = ctx->grave_oldest)) {
        ctx->grave_oldest = o->next_dead;
        free(o->mem);
    }
    ctx->o.magic = SIB_DEAD;
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

/* exit() without ibv_close_device: leave the fabric so the last process
 * out still removes the file. */
__attribute__((destructor)) static void sib_at_exit(void)
{
    struct sib_context *ctx;

    if (pthread_mutex_trylock(&sib_open_lock))
        return;
    for (ctx = sib_open_list; ctx; ctx = ctx->next_open)
        if (ctx->pid == getpid() && sib_fab.refs > 0 && sib_fab.pid == getpid())
            sib_fabric_leave(&sib_fab, ctx->slot);
    sib_open_list = NULL;
    pthread_mutex_unlock(&sib_open_lock);
}

/* ---- queries ---- */

int sib_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
    if (!sib_ctx(context) || !attr)
        return sib_err(EINVAL);
    memset(attr, 0, sizeof(*attr));
    snprintf(attr->fw_ver, sizeof(attr->fw_ver), "softib %d", SIB_VERSION);
    attr->node_guid = htobe64(node_guid());
    attr->sys_image_guid = htobe64(node_guid());
    attr->max_mr_size = UINT64_MAX;
    attr->page_size_cap = 0xfffff000;
    attr->vendor_id = 0x5346; /* "SF" */
    attr->vendor_part_id = 1;
    attr->hw_ver = 1;
    attr->max_qp = SIB_MAX_QP;
    attr->max_qp_wr = SIB_MAX_WR;
    attr->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_N_NOTIFY_CQ;
    attr->max_sge = SIB_MAX_SGE;
    attr->max_sge_rd = SIB_MAX_SGE;
    attr->max_cq = SIB_MAX_CQ;
    attr->max_cqe = SIB_MAX_CQE;
    attr->max_mr = SIB_MAX_MR - 1;
    attr->max_pd = 1 << 20;
    attr->max_qp_rd_atom = SIB_MAX_RD_ATOMIC;
    attr->max_res_rd_atom = SIB_MAX_RD_ATOMIC * SIB_MAX_QP;
    attr->max_qp_init_rd_atom = SIB_MAX_RD_ATOMIC;
    attr->atomic_cap = IBV_ATOMIC_HCA;
    attr->max_ah = 1 << 20;
    attr->max_srq = SIB_MAX_SRQ;
    attr->max_srq_wr = SIB_MAX_WR;
    attr->max_srq_sge = SIB_MAX_SGE;
    attr->max_pkeys = 1;
    attr->local_ca_ack_delay = 15;
    attr->phys_port_cnt = 1;
    return 0;
}

static void fill_port(const struct sib_context *ctx, struct ibv_port_attr *pa)
{
    const struct sib_hdr *h = sib_fab.hdr;

    bool down = sib_port_down(ctx->f, sib_now_ns());

    memset(pa, 0, sizeof(*pa));
    pa->state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
    pa->max_mtu = IBV_MTU_4096;
    pa->active_mtu = (enum ibv_mtu)h->mtu_enum;
    pa->gid_tbl_len = sib_gid_count();
    pa->max_msg_sz = SIB_MAX_MSG;
    pa->pkey_tbl_len = 1;
    pa->lid = h->roce ? 0 : ctx->lid;
    pa->sm_lid = h->roce ? 0 : 1;
    pa->port_cap_flags = h->roce ? 0 : IBV_PORT_SM;
    pa->max_vl_num = 1;
    pa->subnet_timeout = 18;
    pa->active_width = 2;          /* 4x */
    pa->active_speed = 32;         /* EDR */
    pa->phys_state = down ? 3 : 5; /* Disabled, LinkUp */
    pa->link_layer = h->roce ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
}

int sib_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr,
                   size_t len)
{
    struct sib_context *ctx = sib_ctx(context);
    struct ibv_port_attr pa;

    if (!ctx || !attr)
        return sib_err(EINVAL);
    if (port != 1)
        return sib_err(EINVAL);
    fill_port(ctx, &pa);
    memcpy(attr, &pa, len < sizeof(pa) ? len : sizeof(pa));
    return 0;
}

int sib_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
    struct sib_context *ctx = sib_ctx(context);

    if (!ctx || !gid || port_num != 1 || index < 0 || index >= sib_gid_count()) {
        errno = EINVAL;
        return -1;
    }
    *gid = sib_gid(ctx->lid, index);
    return 0;
}

int sib_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
    if (!sib_ctx(context) || !pkey || port_num != 1 || index != 0) {
        errno = EINVAL;
        return -1;
    }
    *pkey = htobe16(0xffff); /* the default full-member partition */
    return 0;
}
