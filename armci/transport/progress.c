/*
 * The client progress engine: owns the client CQ and drains it (send
 * completions: send_queue.c; server replies: replies.c), runs connection
 * setup, posts what waited for a connection that became ready (a hook of
 * entry.c), and, when nothing is ready, blocks on the CQ's completion
 * channel instead of spinning, so waiting processes leave the cores to the
 * ones doing work.
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
#include "core/wait_policy.h"
#include "core/topology.h"
#include "transport/replies.h"
#include "transport/conn_io.h"
#include "transport/liveness.h"
#include "transport/recovery.h"
#include "transport/requests.h"
#include "transport/retire.h"
#include "transport/send_queue.h"
#include "verbs/endpoint.h"

/* How long to poll before blocking: a reply on its way is cheaper to spin for than to
 * sleep and be woken for (a wake-up costs several microseconds). */
#define SPIN_SECONDS 30e-6
/* Longest sleep without an event: bounds how late a timer (retransmission) runs. */
#define MAX_BLOCK_MS 10

static struct endpoint client_cq; /* every client QP and the client's UD channel complete here */
static void (*after_poll)(void);
static int extra_entries;
/* The UD data path (dgram.h, above this file): its own polling and its timers. */
static int (*datagrams_poll)(void);
static double (*datagrams_deadline)(void);

/*
 * Completions that can wait in the client CQ at once, each kind bounded by
 * the constant that limits it:
 *   signaled sends on the RC QPs  SQ_SEND_BUDGET (sq_room keeps the count below it;
 *                                 unsignaled requests complete only in error)
 *   a QP in error                 ARMCI_SEND_WQES: an error completion for each of its
 *                                 requests, signaled or not (the first one ends the job)
 *   reply receives                REPLY_BUFS (the SRQ's buffers, each reposted only
 *                                 after its completion was polled)
 *   the UD channel                cm_client_cq_entries(): twice its send buffers (16) and
 *                                 receive buffers (64), since completions from before a
 *                                 reset of its QP may still be there (ud.c); 0 in static mode
 * = 1024 + 64 + 256 + 160 = 1504 in on-demand mode by default. A CQ of that many entries
 * cannot overrun (an overrun would put every QP on it in error).
 */
static int client_cq_bound(void)
{
    return SQ_SEND_BUDGET + cfg.send_wqes + REPLY_BUFS + cm_client_cq_entries() + extra_entries;
}

_Static_assert(SQ_SEND_BUDGET > 0 && REPLY_BUFS > 0 && SQ_SEND_BUDGET + REPLY_BUFS < (1 << 20),
               "client CQ terms out of range");

static void check_async_events(void);

void progress_init(void (*poll_hook)(void), int extra_cq_entries)
{
    extra_entries = extra_cq_entries;
    /* endpoint_create checks that the provider's CQ really has this many entries. */
    endpoint_create(&client_cq, "client", client_cq_bound(), true);
    endpoint_on(&client_cq, WR_TAG_POINTER, retire_on_send_completion, NULL);
    endpoint_on(&client_cq, WR_TAG_CONN, retire_on_send_completion, NULL);
    replies_init(&client_cq);
    after_poll = poll_hook;
    recovery_init(check_async_events);
}

void progress_fini(void)
{
    if (!client_cq.cq)
        return;
    check_async_events(); /* a port that came back meanwhile is said before we go */
    replies_fini();
    endpoint_destroy(&client_cq);
    client_cq = (struct endpoint){0};
    after_poll = NULL;
    datagrams_poll = NULL;
    datagrams_deadline = NULL;
}

void progress_add_datagrams(int (*poll)(void), double (*next_deadline)(void))
{
    datagrams_poll = poll;
    datagrams_deadline = next_deadline;
}

struct endpoint *progress_cq(void)
{
    return &client_cq;
}

static int poll_all(void)
{
    sq_flush_all(); /* lazy works someone may wait for get a completion */
    int n = endpoint_poll(&client_cq);
    n += cm_progress();
    if (datagrams_poll)
        n += datagrams_poll();
    if (after_poll)
        after_poll();
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
    double ud = datagrams_deadline ? datagrams_deadline() : -1;
    if (ud >= 0 && (deadline < 0 || ud < deadline))
        deadline = ud;
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
/*
 * This process's port went down or came back: said on stderr, so that an
 * outage the RC retransmissions rode out is seen, with how long it lasted.
 */
static double port_down_since = -1;

static void port_event(enum ibv_event_type type)
{
    if (type == IBV_EVENT_PORT_ERR && port_down_since < 0) {
        port_down_since = now_seconds();
        armci_warn("port %d of %s went down (%s): requests are retransmitted for up to "
                   "ARMCI_IB_RETRY=%d x ARMCI_IB_TIMEOUT=%d",
                   vdev.port, vdev.name, ibv_event_type_str(type), cfg.ib_retry, cfg.ib_timeout);
    } else if (type == IBV_EVENT_PORT_ACTIVE && port_down_since >= 0) {
        armci_warn("port %d of %s is up again (%s) after %.1f s", vdev.port, vdev.name,
                   ibv_event_type_str(type), now_seconds() - port_down_since);
        port_down_since = -1;
    }
}

/* Events are looked at when a wait sleeps, and at least this often by one that keeps
 * spinning (each look is a system call). */
#define EVENTS_EVERY_SECONDS 0.05
static double events_checked;

static void check_async_events(void)
{
    struct ibv_async_event ev;
    events_checked = now_seconds();
    while (verbs_next_async_event(&ev)) {
        bool qp_error = ev.event_type == IBV_EVENT_QP_FATAL ||
                        ev.event_type == IBV_EVENT_QP_REQ_ERR ||
                        ev.event_type == IBV_EVENT_QP_ACCESS_ERR ||
                        ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED;
        struct ibv_qp *ev_qp = qp_error ? ev.element.qp : NULL;
        struct conn *c = ev_qp ? cm_conn_by_qp(ev_qp) : NULL;
        enum ibv_event_type type = ev.event_type;
        ibv_ack_async_event(&ev);
        port_event(type);
        /* With recovery on, a QP of ours that went to the error state on its own (a fatal
         * event; the last-WQE event of an SRQ-attached QP entering it, the only sign when
         * nothing was posted) is set up anew; the old one of a connection being set up anew
         * says nothing new. One that broke on an access error is this process's or its
         * server's bug, named below. */
        bool access_error = type == IBV_EVENT_QP_REQ_ERR || type == IBV_EVENT_QP_ACCESS_ERR;
        if (c && !access_error && cfg.recovery_timeout > 0) {
            if (!c->io->recovering && ev_qp == c->qp)
                recovery_start(c, ibv_event_type_str(type), "a QP event");
            continue;
        }
        if (c && c->io->outstanding > 0)
            armci_die(NULL,
                      "the connection to the data server of node %d failed (%s) with %d "
                      "operations outstanding: the server could not complete a request of this "
                      "process (e.g. one naming a reply buffer it may not write)",
                      c->node, ibv_event_type_str(type), c->io->outstanding);
    }
}

/* Between two polls of a spin: other threads may issue and poll meanwhile, and on a host
 * with more threads than cores the data server we wait for may need this core. */
static void spin_pause(void)
{
    unsigned held = rt_lock_suspend();
    wait_pause();
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
    double now = now_seconds(), spin_until = now + SPIN_SECONDS;
    if (now - events_checked >= EVENTS_EVERY_SECONDS)
        check_async_events();
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
    endpoint_wait(&client_cq, block_timeout_ms(), extra, nextra);
}

void progress_wait(void)
{
    rt_lock();
    wait_once();
    rt_unlock();
}

void handle_wait(struct handle *r)
{
    rt_lock();
    while (r->pending > 0)
        wait_once();
    rt_unlock();
}
