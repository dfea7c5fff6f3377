/*
 * The client progress engine: drains the client CQ (send completions and
 * server replies), runs connection setup, and, when nothing is ready,
 * blocks on the CQ's completion channel instead of spinning, so waiting
 * processes leave the cores to the ones doing work.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>

#include "../config.h"
#include "../error.h"
#include "../net.h"
#include "../odcm/cm.h"
#include "../progress.h"
#include "../thread_check.h"
#include "../util.h"
#include "client.h"
#include "replies.h"

/* How long to poll before blocking: a reply on its way is cheaper to spin for than to
 * sleep and be woken for (a wake-up costs several microseconds). */
#define SPIN_SECONDS 30e-6
/* Longest sleep without an event: bounds how late a timer (retransmission) runs. */
#define MAX_BLOCK_MS 10
#define CQ_BATCH     32

long client_server_errors; /* rejected requests, counted when ARMCI_TEST_HOOKS says so */

static void complete(struct inflight *f)
{
    if (f->on_done)
        f->on_done(f);
    if (f->data)
        bounce_put(f->data);
    if (f->bounce)
        bounce_put(f->bounce);
    f->conn->outstanding--;
    ep.outstanding--;
    if (f->req)
        req_op_done(f->req);
    inflight_release(f);
}

static const char *status_name(int status)
{
    switch (status) {
    case DS_EFAULT:
        return "the address range is not inside any ARMCI segment of that node";
    case DS_EINVAL:
        return "malformed request";
    default:
        return "unknown status";
    }
}

static void on_send_completion(const struct ibv_wc *wc)
{
    struct inflight *f = wr_id_pointer(wc->wr_id);
    struct conn *c = f->conn;
    c->sq_posted--;
    ep.sends_posted--;
    if (wc->status != IBV_WC_SUCCESS)
        armci_die(NULL, "%s to node %d failed: %s (vendor error 0x%x)", f->what, c->node,
                  ibv_wc_status_str(wc->status), wc->vendor_err);
    switch (f->kind) {
    case INF_READ:
        if (f->copy_to)
            memcpy(f->copy_to, f->bounce->buf, f->copy_len);
        complete(f);
        break;
    case INF_WRITE:
        complete(f);
        break;
    case INF_REQUEST:
        /* The request buffer is free; the operation waits for its reply. */
        bounce_put(f->bounce);
        f->bounce = NULL;
        if (--f->events_left == 0)
            complete(f);
        break;
    }
}

static void on_reply(const struct ibv_wc *wc)
{
    int index = (int)wr_id_index(wc->wr_id);
    if (wc->status != IBV_WC_SUCCESS)
        armci_die(NULL, "receiving a data-server reply failed: %s", ibv_wc_status_str(wc->status));
    struct ds_reply r = *reply_buffer(index);
    reply_buffer_post(index);
    ep.reply_slots++;

    struct inflight *f = (struct inflight *)(uintptr_t)r.token;
    f->conn->credits += r.credits;
    if (r.status != DS_OK) {
        if (!(cfg.test_hooks & HOOK_SERVER_ERRORS_NONFATAL))
            armci_die(NULL, "the data server of node %d rejected a %s: %s", f->conn->node, f->what,
                      status_name(r.status));
        client_server_errors++;
    }
    if (f->result)
        *f->result = r.value;
    if (f->status)
        *f->status = r.status;
    if (--f->events_left == 0)
        complete(f);
}

/* Handles what the CQ holds; returns how many completions there were. */
static int poll_cq_once(void)
{
    struct ibv_wc wc[CQ_BATCH];
    int n = ibv_poll_cq(ep.cq, CQ_BATCH, wc);
    if (n < 0)
        armci_die(NULL, "ibv_poll_cq (client) failed: %d", n);
    for (int i = 0; i < n; i++) {
        switch (wr_id_tag(wc[i].wr_id)) {
        case WR_TAG_RECV:
            on_reply(&wc[i]);
            break;
        case WR_TAG_UD_RECV:
        case WR_TAG_UD_SEND:
            cm_client_ud_completion(&wc[i]);
            break;
        default:
            on_send_completion(&wc[i]);
            break;
        }
    }
    return n;
}

static int poll_all(void)
{
    int n = poll_cq_once();
    cm_progress();
    cm_drain_ready();
    return n;
}

void progress_poll(void)
{
    thread_check_enter();
    if (net_active())
        poll_all();
    thread_check_leave();
}

static int block_timeout_ms(void)
{
    double deadline = cm_next_deadline();
    if (deadline < 0)
        return MAX_BLOCK_MS;
    int ms = (int)(deadline * 1e3) + 1;
    return ms < MAX_BLOCK_MS ? ms : MAX_BLOCK_MS;
}

static void wait_once(void)
{
    if (!net_active()) {
        sched_yield();
        return;
    }
    double spin_until = now_seconds() + SPIN_SECONDS;
    do {
        if (poll_all())
            return;
        cpu_relax();
    } while (now_seconds() < spin_until);
    /* Arm, then look once more: a completion may have slipped in before the arm. */
    int rc = ibv_req_notify_cq(ep.cq, 0);
    if (rc)
        armci_die(NULL, "ibv_req_notify_cq (client) failed: %s", strerror(rc));
    if (poll_all())
        return;
    struct pollfd pfd = {.fd = ep.channel->fd, .events = POLLIN};
    if (poll(&pfd, 1, block_timeout_ms()) <= 0)
        return;
    struct ibv_cq *cq;
    void *ctx;
    /* Non-blocking channel: a wake-up without an event must not stall the timers. */
    if (ibv_get_cq_event(ep.channel, &cq, &ctx)) {
        if (errno == EAGAIN)
            return;
        armci_die(NULL, "ibv_get_cq_event (client) failed: %s", strerror(errno));
    }
    /* Acknowledging is costly: do it in batches. */
    if (++ep.events_unacked >= 64) {
        ibv_ack_cq_events(ep.cq, ep.events_unacked);
        ep.events_unacked = 0;
    }
}

void progress_wait(void)
{
    thread_check_enter();
    wait_once();
    thread_check_leave();
}
