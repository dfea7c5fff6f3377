/*
 * The client progress engine: drains the client CQ (send completions and
 * server replies), runs connection setup, and, when nothing is ready,
 * blocks on the CQ's completion channel instead of spinning, so waiting
 * processes leave the cores to the ones doing work.
 */
#include <poll.h>
#include <sched.h>
#include <string.h>

#include "core/config.h"
#include "core/mutant.h"
#include "core/error.h"
#include "verbs/device.h"
#include "verbs/memory.h"
#include "odcm/cm.h"
#include "transport/progress.h"
#include "core/threads.h"
#include "core/util.h"
#include "core/topology.h"
#include "transport/client.h"
#include "transport/conn_queue.h"
#include "transport/liveness.h"
#include "transport/replies.h"
#include "transport/send_queue.h"

/* How long to poll before blocking: a reply on its way is cheaper to spin for than to
 * sleep and be woken for (a wake-up costs several microseconds). */
#define SPIN_SECONDS 30e-6
/* Longest sleep without an event: bounds how late a timer (retransmission) runs. */
#define MAX_BLOCK_MS 10

static void complete(struct work *f)
{
    if (f->on_done)
        f->on_done(f);
    if (f->data)
        bounce_free(f->data);
    if (f->bounce)
        bounce_free(f->bounce);
    work_retire(f);
}

static const char *status_name(int status)
{
    switch (status) {
    case DS_EFAULT:
        return "the address range is not inside any ARMCI segment of that node";
    case DS_EINVAL:
        return "malformed request";
    case DS_EPERM:
        return "the mutex is not held by this process";
    default:
        return "unknown status";
    }
}

/* The completion of one work's request, in work order (reads: the data is there). */
static void work_request_done(struct work *f)
{
    switch (f->kind) {
    case WORK_READ:
    case WORK_WRITE:
        complete(f);
        break;
    case WORK_MESSAGE:
        /* The request buffer (and a payload sent in place) is free; the operation waits
         * for its reply. */
        bounce_free(f->bounce);
        f->bounce = NULL;
        if (f->sent)
            handle_op_done(f->sent);
        f->sent = NULL;
        if (--f->events_left == 0)
            complete(f);
        break;
    }
}

/*
 * A request that failed. A node whose adapter stopped acknowledging (retry
 * counter exceeded) is lost: its host is down, hung or cut off. The job
 * cannot go on without the memory and the data server of that node: say
 * which node and host, and end it.
 */
static void failed(const struct work *f, const struct conn *c, const struct ibv_wc *wc)
{
    char node[160];
    topo_describe_node(c->node, node, sizeof(node));
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
void on_send_completion(void *ctx, const struct ibv_wc *wc)
{
    bool own = wr_id_tag(wc->wr_id) == WR_TAG_POINTER;
    struct work *f = own ? wr_id_pointer(wc->wr_id) : NULL;
    struct conn *c = own ? f->conn : wr_id_pointer(wc->wr_id);
    if (wc->status != IBV_WC_SUCCESS)
        failed(f, c, wc);
    struct sq_retire r = sq_completed(c);
    for (uint32_t i = 0; i < r.lazy; i++)
        work_request_done(sq_pop_lazy(c));
    if (f)
        work_request_done(f);
}

/* One message answered: its value or status where it wanted them, then its completion. */
static void answered(struct work *f, int status, int64_t value)
{
    ep.reply_slots++;
    /* A rejection is the caller's bug, unless the caller asked for the status itself. */
    if (status != DS_OK && !f->status)
        armci_die(NULL, "the data server of node %d rejected a %s: %s", f->conn->node, f->what,
                  status_name(status));
    if (f->result)
        *f->result = value;
    if (f->status)
        *f->status = status;
    if (--f->events_left == 0)
        complete(f);
}

/*
 * A lock request is answered once (granted or refused at once) or twice (queued, then granted or
 * refused): it reserved a reply slot for each of the two answers (reserve_lock_request).
 */
static void lock_answered(struct work *f, int status)
{
    if (status == DS_QUEUED) {
        f->lock_queued = true;
        ep.reply_slots++;
        return;
    }
    if (!f->lock_queued)
        ep.reply_slots++; /* the slot of a queued notice that did not come */
    answered(answer_lock(f), status, 0);
}

static void in_order_answered(struct conn *c, struct ds_reply r)
{
#if ARMCI_MUTANT_IS(reply_batch_cut)
    r.answers -= r.answers > 2;
#endif
    for (uint32_t k = 1; k < r.answers; k++)
        answered(answer_next(c), DS_OK, 0);
    answered(answer_next(c), r.status, r.value);
}

/*
 * A reply answers the lock request its token names, or the in-order
 * messages of its connection up to that one (dataserver/protocol.h): all
 * of them succeeded but the last, whose status and value the reply carries.
 * A reply that does not fit what this process awaits is dropped.
 */
void on_reply(void *ctx, const struct ibv_wc *wc)
{
    struct ds_reply r = *(const struct ds_reply *)recv_pool_buffer(&ep.replies, wc);
    struct work *last = token_lookup(r.token, wc->qp_num);
    bool fits = last && (r.answers == 0 ? !last->in_order : answers_match(last, r.answers));
    if (!fits) {
        armci_warn("dropped a data-server reply with unknown token %llx (%u answers) on QP %u",
                   (unsigned long long)r.token, r.answers, wc->qp_num);
        return; /* its buffer is reposted: the count of free reply slots is unchanged */
    }
    struct conn *c = last->conn;
    if (r.answers == 0 && r.status == DS_QUEUED && last->lock_queued) {
        armci_warn("dropped a second queued notice for lock token %llx on QP %u",
                   (unsigned long long)r.token, wc->qp_num);
        return;
    }
#if !ARMCI_MUTANT_IS(credits_never_returned)
    c->credits += r.credits;
#endif
    if (r.answers == 0)
        lock_answered(last, r.status);
    else
        in_order_answered(c, r);
}

static int poll_all(void)
{
    sq_flush_all(); /* lazy works someone may wait for get a completion */
    int n = endpoint_poll(&ep.cq);
    n += cm_progress();
    conns_drain_ready();
    if (n)
        liveness_progressed();
    return n;
}

void progress_poll(void)
{
    rt_lock();
    if (net_active())
        poll_all();
    rt_unlock();
}

static int block_timeout_ms(void)
{
    double deadline = cm_next_deadline();
    if (deadline < 0)
        return MAX_BLOCK_MS;
    int ms = (int)(deadline * 1e3) + 1;
    return ms < MAX_BLOCK_MS ? ms : MAX_BLOCK_MS;
}

/*
 * A client QP that went to the error state without a failed completion of
 * ours: the server's RDMA write to us was refused (a request of ours named
 * a reply buffer it could not write) and no reply will ever come. Say so
 * instead of waiting for it forever. Events of the data server's QPs (same
 * device context in the master) are the server's business: ignored here.
 */
static void check_async_events(void)
{
    struct ibv_async_event ev;
    while (verbs_next_async_event(&ev)) {
        bool qp_error = ev.event_type == IBV_EVENT_QP_FATAL ||
                        ev.event_type == IBV_EVENT_QP_REQ_ERR ||
                        ev.event_type == IBV_EVENT_QP_ACCESS_ERR ||
                        ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED;
        struct conn *c = qp_error ? cm_conn_by_qp(ev.element.qp) : NULL;
        enum ibv_event_type type = ev.event_type;
        ibv_ack_async_event(&ev);
        if (c && c->io->outstanding > 0)
            armci_die(NULL,
                      "the connection to the data server of node %d failed (%s) with %d "
                      "operations outstanding: the server could not complete a request of this "
                      "process (e.g. one naming a reply buffer it may not write)",
                      c->node, ibv_event_type_str(type), c->io->outstanding);
    }
}

/* Between two polls of a spin: other threads may issue and poll meanwhile. */
static void spin_pause(void)
{
    unsigned held = rt_lock_suspend();
    cpu_relax();
    rt_lock_resume(held);
}

static void wait_once(void)
{
    if (!net_active()) {
        unsigned held = rt_lock_suspend();
        sched_yield();
        rt_lock_resume(held);
        return;
    }
    double spin_until = now_seconds() + SPIN_SECONDS;
    do {
        if (poll_all())
            return;
        spin_pause();
    } while (now_seconds() < spin_until);
    check_async_events();
    liveness_waiting();
    struct pollfd extra[2] = {{.fd = vdev.ctx->async_fd, .events = POLLIN}};
    int nextra = 1;
    int cm_fd = cm_wait_fd();
    if (cm_fd >= 0)
        extra[nextra++] = (struct pollfd){.fd = cm_fd, .events = POLLIN};
    /* endpoint_wait lets the runtime lock go while it sleeps. */
    endpoint_wait(&ep.cq, block_timeout_ms(), extra, nextra);
}

void progress_wait(void)
{
    rt_lock();
    wait_once();
    rt_unlock();
}
