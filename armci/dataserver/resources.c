/* The data server's verbs resources (resources.h). */
#include "dataserver/resources.h"

#include "core/config.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/util.h"
#include "core/wr_id.h"
#include "wire/protocol.h"
#include "odcm/cm_server.h"
#include "verbs/device.h"
#include "verbs/qp_pool.h"

/* Out buffers: 2 at first, doubling up to 16 while packed gets are in flight together. */
#define OUT_BUFS_INITIAL 2
#define OUT_BUFS         16

struct server_resources ds_res;

struct rc_qp_caps server_qp_caps(void)
{
    return (struct rc_qp_caps){.max_send_wr = cm_server_send_depth(),
                               .max_inline = sizeof(struct ds_reply)};
}

int server_send_budget(void)
{
    return 2 * cfg.server_bufs + 64;
}

static int dgram_recv_cq_entries(void)
{
    return cfg.hybrid_on ? 2 * DGRAM_SERVER_RECV_BUFS : 0;
}

static int dgram_send_cq_entries(void)
{
    return cfg.hybrid_on ? 2 * DGRAM_SERVER_SEND_BUFS : 0;
}

void resources_create(completion_fn on_request)
{
    int nbufs = cfg.server_bufs;
    endpoint_create(&ds_res.requests, "data server requests",
                    nbufs + cm_server_recv_cq_entries() + dgram_recv_cq_entries() + 16, true);
    /* With a channel: a loop with reads of client data in flight wakes on their completions
     * (pulls.h). */
    endpoint_create(&ds_res.sends, "data server sends",
                    server_send_budget() + cm_server_send_cq_entries() + dgram_send_cq_entries(),
                    true);
    /* One client's worth of request buffers at first; more as clients connect. */
    recv_pool_create(&ds_res.bufs, "data server request buffers", MEM_BUF_RECV,
                     MIN(nbufs, cfg.server_credits), nbufs,
                     sizeof(struct ds_message) + cfg.server_buf_size, vdev.pd, &ds_res.requests,
                     WR_TAG_RECV, on_request, NULL);
    buffer_pool_create(&ds_res.out, "ARMCI_Init", "data server out buffers", OUT_BUFS_INITIAL,
                       OUT_BUFS, cfg.bounce_size, false, MEM_BUF_SERVER);
}

void resources_fit_clients(int clients)
{
    recv_pool_grow(&ds_res.bufs, clients * cfg.server_credits);
}

void resources_trim(double now)
{
    buffer_pool_trim(&ds_res.out, now);
}

void resources_create_qp_pool(void)
{
    if (cfg.connect != CFG_CONNECT_ONDEMAND || cfg.qp_pool <= 0)
        return;
    struct rc_qp_caps caps = server_qp_caps();
    ds_res.qp_pool = qp_pool_create("data server", ds_res.sends.cq, ds_res.requests.cq,
                                    ds_res.bufs.srq, &caps, cfg.qp_pool, 1);
}

void resources_destroy(void)
{
    qp_pool_destroy(ds_res.qp_pool);
    recv_pool_destroy(&ds_res.bufs);
    endpoint_destroy(&ds_res.requests);
    endpoint_destroy(&ds_res.sends);
    buffer_pool_destroy(&ds_res.out);
    ds_res = (struct server_resources){0};
}
