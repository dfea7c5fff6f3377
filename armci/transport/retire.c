/*
 * Send completions on the client CQ (retire.h): what a signaled one
 * retires (send_queue.h's accounting), and the works it completes.
 */
#include "transport/retire.h"

#include "core/config.h"
#include "core/error.h"
#include "core/topology.h"
#include "core/wr_id.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/recovery.h"
#include "transport/send_queue.h"
#include "transport/work.h"
#include "verbs/device.h"

/* The completion of one work's request, in work order (reads: the data is there). */
static void work_request_done(struct work *f)
{
    switch (f->kind) {
    case WORK_READ:
    case WORK_WRITE:
        work_complete(f);
        break;
    case WORK_MESSAGE:
        /* The request buffer (and a payload sent in place) is free; the operation waits
         * for its reply. With recovery on the buffer is its SEND record's (replay_log.h). */
        if (f->bounce)
            buffer_free(f->bounce);
        f->bounce = NULL;
        if (f->sent)
            handle_op_done(f->sent);
        f->sent = NULL;
        if (--f->events_left == 0)
            work_complete(f);
        break;
    case WORK_REPLAY_MARKER:
        break;
    }
}

/*
 * A request that failed. A node whose adapter stopped acknowledging (retry
 * counter exceeded) is lost: its host is down, hung or cut off. The job
 * cannot go on without the memory and the data server of that node: say
 * which node and host, and end it. Unless this end's own port is down:
 * then it is our link that failed, and no other node is to blame.
 */
static void failed(const struct work *f, const struct conn *c, const struct ibv_wc *wc)
{
    char node[160];
    topo_describe_node(c->node, node, sizeof(node));
    if ((wc->status == IBV_WC_RETRY_EXC_ERR || wc->status == IBV_WC_LOC_QP_OP_ERR) &&
        verbs_port_state() != IBV_PORT_ACTIVE)
        armci_die(NULL,
                  "port %d of %s on this host is down (%s): its own link failed, not %s (%s, "
                  "after %s; ARMCI_IB_RETRY=%d retransmissions of ARMCI_IB_TIMEOUT=%d)",
                  vdev.port, vdev.name, ibv_port_state_str(verbs_port_state()), node,
                  ibv_wc_status_str(wc->status), f ? f->what : "an RDMA operation", cfg.ib_retry,
                  cfg.ib_timeout);
    if (wc->status == IBV_WC_RETRY_EXC_ERR)
        armci_die(NULL,
                  "%s is lost: its adapter stopped answering (%s, after %s; "
                  "ARMCI_IB_RETRY=%d retransmissions of ARMCI_IB_TIMEOUT=%d): "
                  "the host is down, hung or unreachable",
                  node, ibv_wc_status_str(wc->status), f ? f->what : "an RDMA operation",
                  cfg.ib_retry, cfg.ib_timeout);
    if (wc->status == IBV_WC_LOC_QP_OP_ERR)
        armci_die(NULL,
                  "%s to %s failed: %s: this host could not send to it (on RoCE, its own "
                  "network link going down gives this)",
                  f ? f->what : "an RDMA operation", node, ibv_wc_status_str(wc->status));
    armci_die(NULL, "%s to %s failed: %s (vendor error 0x%x)", f ? f->what : "an RDMA operation",
              node, ibv_wc_status_str(wc->status), wc->vendor_err);
}

/*
 * A signaled send completion: it retires the run of requests before it on
 * its connection (send_queue.h), the lazy works among them first, then its
 * own work if it is a work's last request (tag POINTER) rather than a
 * flush or a signal inside a run (tag CONN).
 */
void retire_on_send_completion(void *ctx, const struct ibv_wc *wc)
{
    bool own = wr_id_tag(wc->wr_id) == WR_TAG_POINTER;
    struct work *f = own ? wr_id_pointer(wc->wr_id) : NULL;
    struct conn *c = own ? f->conn : wr_id_pointer(wc->wr_id);
    /* A request of a QP that broke (flushed, or completed late): the replay on its successor
     * accounts for it (recovery.h). */
    if (c->io->recovering || wc->qp_num != c->qp->qp_num)
        return;
    if (f && f->kind == WORK_REPLAY_MARKER) {
        recovery_marker_done(c, wc);
        return;
    }
    if (wc->status != IBV_WC_SUCCESS &&
        !(recovery_mends(wc->status) &&
          recovery_start(c, ibv_wc_status_str(wc->status), f ? f->what : "an RDMA operation")))
        failed(f, c, wc);
    if (wc->status != IBV_WC_SUCCESS)
        return;
    struct sq_retire r = sq_completed(c);
    for (uint32_t i = 0; i < r.lazy; i++)
        work_request_done(sq_pop_lazy(c));
    if (f)
        work_request_done(f);
}
