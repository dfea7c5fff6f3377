/*
 * Requests without a data payload towards other nodes (remote.h): Rmw and
 * locks at the target node's data server, and fences. Data moves through
 * transfer.c.
 */
#include "transport/remote.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/acc.h"
#include "core/config.h"
#include "dataserver/protocol.h"
#include "core/error.h"
#include "core/ticket_lock.h"
#include "verbs/memory.h"
#include "odcm/cm.h"
#include "transport/progress.h"
#include "core/runtime.h"
#include "core/threads.h"
#include "core/topology.h"
#include "core/util.h"
#include "transport/client.h"

/* Sends one payload-free request and waits for its reply; returns the reply's value. */
static int64_t message_and_wait(const struct target *t, enum ds_op op, uint64_t len, int rmw_op,
                                int64_t value, const char *what)
{
    rt_lock();
    if (op == DS_LOCK)
        reserve_lock_request();
    struct conn *c = conn_get(t->node);
    struct bounce *b;
    struct ds_message *rq = message_begin(c, op, t, 0, len, &b);
    rq->rmw_op = (uint8_t)rmw_op;
    rq->value = value;
    struct handle done = {0};
    int64_t result = 0;
    struct work *f = work_new(WORK_MESSAGE, c, &done);
    f->result = &result;
    /* A lock's grant may wait for another thread's unlock: no fence waits for it, and a cap
     * on connections gives way to that unlock (cm.c). While it waits it holds no credit of c
     * (the server's DS_QUEUED answer returns it), only a reply slot for the grant. */
    if (op == DS_LOCK) {
        work_not_fenced(f);
        c->io->lock_waits++;
    }
    message_send(c, rq, b, 0, f, what);
    handle_wait(&done);
    if (op == DS_LOCK) {
        c->io->lock_waits--;
        lock_granted();
    }
    conn_put(c);
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
    struct bounce *b;
    struct ds_message *rq = message_begin(c, DS_UNLOCK, t, 0, sizeof(struct ticket_lock), &b);
    message_send(c, rq, b, 0, work_new(WORK_MESSAGE, c, handle_implicit()), "unlock");
    conn_put(c);
    rt_unlock();
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
    if (ep.outstanding > 0) {
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
