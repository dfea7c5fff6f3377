/*
 * The remote_* entry points without a data payload (remote.h): Rmw and
 * locks at the target node's data server, and fences. Puts, gets and
 * accumulates enter in entry.c.
 */
#include "transport/remote.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/acc.h"
#include "core/mutant.h"
#include "core/config.h"
#include "dataserver/protocol.h"
#include "core/error.h"
#include "core/ticket_lock.h"
#include "verbs/memory.h"
#include "odcm/cm.h"
#include "transport/entry.h"
#include "transport/progress.h"
#include "core/runtime.h"
#include "core/threads.h"
#include "core/topology.h"
#include "core/util.h"
#include "transport/send_queue.h"
#include "transport/work.h"

/* Sends one payload-free request and waits for its reply; returns the reply's value. */
static int64_t message_and_wait(const struct target *t, enum ds_op op, uint64_t len, int rmw_op,
                                int64_t value, const char *what)
{
    rt_lock();
    if (op == DS_LOCK)
        reserve_lock_request();
    struct conn *c = conn_get(t->node);
    struct handle done = {0};
    int64_t result = 0;
    /* A lock's grant may wait for another thread's unlock: no fence waits for it, and a cap
     * on connections gives way to that unlock (cm.c). While it waits it holds no credit of c
     * (the server's DS_QUEUED answer returns it), only a reply slot for the grant. */
    struct request_desc r = {
        .msg = {.op = (uint8_t)op, .len = len, .rmw_op = (uint8_t)rmw_op, .value = value},
        .t = t,
        .req = &done,
        .result = &result,
        .unfenced = op == DS_LOCK,
        .what = what};
    if (op == DS_LOCK)
        c->io->lock_waits++;
    post_request(c, &r);
    handle_wait(&done);
    if (op == DS_LOCK) {
        c->io->lock_waits--;
        lock_granted();
    }
    conn_unpin(c);
    rt_unlock();
    return result;
}

long remote_rmw(const struct target *t, int op, long value)
{
    size_t size = (op == ARMCI_FETCH_AND_ADD || op == ARMCI_SWAP) ? sizeof(int) : sizeof(long);
    return (long)message_and_wait(t, DS_RMW, size, op, value, "read-modify-write");
}

void remote_lock(const struct target *t)
{
    message_and_wait(t, DS_LOCK, sizeof(struct ticket_lock), 0, 0, "lock");
}

void remote_unlock(const struct target *t)
{
    /* Writes issued before on this connection land first (RC order); no need to wait. */
    rt_lock();
    struct conn *c = conn_get(t->node);
    struct request_desc r = {.msg = {.op = DS_UNLOCK, .len = sizeof(struct ticket_lock)},
                             .t = t,
                             .req = handle_implicit(),
                             .what = "unlock"};
    post_request(c, &r);
    conn_unpin(c);
    rt_unlock();
}

/* Waits until every fence-covered operation started on c before this call is complete at
 * the target (operations other threads start meanwhile are not waited for). */
static void conn_fence(struct conn *c)
{
    c->io->pinned++; /* idle while we wait, but not to be closed under us */
    /* Operations queued while the connection was set up were started before us. */
    while (c->io->queue_head || c->io->draining)
        progress_wait();
    uint64_t issued = c->io->issued;
    while (c->io->oldest && c->io->oldest->seq < issued)
        progress_wait();
    c->io->pinned--;
}

void remote_fence(int node)
{
    rt_lock();
    struct conn *c = cm_conn_if_exists(node);
    if (c)
        conn_fence(c);
    rt_unlock();
}

void remote_fence_all(void)
{
    rt_lock();
    if (works_outstanding() > 0) {
        /* By node, not by pointer: a connection may go away while we wait for another. */
        int n;
        int *nodes = cm_conn_nodes(&n);
        for (int i = 0; i < n; i++) {
            struct conn *c = cm_conn_if_exists(nodes[i]);
            if (c)
                conn_fence(c);
        }
        free(nodes);
    }
    rt_unlock();
}
