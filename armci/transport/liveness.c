/* Probing the nodes a quiet waiter waits on (liveness.h). */
#include "transport/liveness.h"

#include <stdlib.h>

#include "core/threads.h"
#include "core/util.h"
#include "odcm/cm.h"
#include "transport/conn_io.h"
#include "transport/send_queue.h"
#include "transport/work.h"

static double quiet_since; /* 0: something completed since the last wait */
static double next_scan;

static void probe_done(struct work *f)
{
    f->conn->io->probing = false;
}

/*
 * A signaled zero-length RDMA write on c. It names a place in the node's memory that this
 * process has addressed before (send_queue.h's flush address): zero bytes need no address
 * by the standard, but rdma_rxe checks the key and range all the same. A connection that
 * never addressed the node's memory has nothing to wait for there, and is not probed. The
 * probe never waits for room (the progress engine calls here before it blocks): with a full
 * send queue, the next scan tries again, and the requests in the queue fail on a lost node.
 */
static void probe_conn(struct conn *c, double now)
{
    if (c->state != CONN_READY || c->io->probing || now < c->io->probed_at + 1.0 ||
        !c->io->flush_addr || !sq_room(c))
        return;
    c->io->probing = true;
    c->io->probed_at = now;
    struct work *f = work_new(WORK_READ, c, NULL);
    work_not_fenced(f); /* a fence need not wait for it */
    f->on_done = probe_done;
    f->what = "a liveness probe (zero-length RDMA write)";
    struct ibv_send_wr wr = {
        .opcode = IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_INLINE,
        .wr = {.rdma = {.remote_addr = c->io->flush_addr, .rkey = c->io->flush_rkey}},
    };
    sq_prepare(c, &wr, f, true, true);
    sq_post(c, &wr, f->what);
}

void liveness_probe(int node)
{
    rt_lock();
    struct conn *c = cm_conn_if_exists(node);
    if (c)
        probe_conn(c, now_seconds());
    rt_unlock();
}

void liveness_progressed(void)
{
    quiet_since = 0;
}

void liveness_waiting(void)
{
    double now = now_seconds();
    if (!quiet_since) {
        quiet_since = now;
        return;
    }
    if (now - quiet_since < LIVENESS_QUIET_SECONDS || now < next_scan)
        return;
    next_scan = now + 1.0;
    int n;
    int *nodes = cm_conn_nodes(&n);
    for (int i = 0; i < n; i++) {
        struct conn *c = cm_conn_if_exists(nodes[i]);
        if (c && c->io->outstanding > (c->io->probing ? 1 : 0))
            probe_conn(c, now);
    }
    free(nodes);
}
