/*
 * The remote_* entry points (remote.h): puts, gets and accumulates,
 * contiguous, strided and vector, as transfers started through entry.c's
 * transfer_start; Rmw and locks at the target node's data server; fences.
 */
#include "transport/remote.h"
#include "transport/replay_log.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/acc.h"
#include "core/mutant.h"
#include "core/config.h"
#include "wire/protocol.h"
#include "core/error.h"
#include "core/ticket_lock.h"
#include "verbs/memory.h"
#include "odcm/cm.h"
#include "transport/dgram.h"
#include "transport/entry.h"
#include "transport/progress.h"
#include "core/runtime.h"
#include "core/threads.h"
#include "core/topology.h"
#include "core/util.h"
#include "transport/requests.h"
#include "transport/transfer_desc.h"
#include "transport/work.h"

/* ---- puts, gets and accumulates: the shapes the API layer hands over, as transfers ---- */

void remote_put(const struct target *t, const void *src, size_t bytes, struct handle *req,
                bool blocking)
{
    int count[1] = {(int)bytes};
    struct transfer x = {
        .op = TRANSFER_PUT, .local = (char *)src, .remote = *t, .d = {0, count, NULL, NULL}};
    transfer_start(&x, req, blocking);
}

void remote_put_rc(const struct target *t, const void *src, size_t bytes)
{
    int count[1] = {(int)bytes};
    struct transfer x = {.op = TRANSFER_PUT,
                         .local = (char *)src,
                         .remote = *t,
                         .d = {0, count, NULL, NULL},
                         .rc_only = true};
    transfer_start(&x, handle_implicit(), true);
}

void remote_put_rc_complete(void)
{
    handle_wait(handle_implicit());
}

void remote_get(const struct target *t, void *dst, size_t bytes, struct handle *req, bool blocking)
{
    int count[1] = {(int)bytes};
    struct transfer x = {
        .op = TRANSFER_GET, .local = dst, .remote = *t, .d = {0, count, NULL, NULL}};
#if ARMCI_MUTANT_IS(get_wrong_offset)
    x.remote.server_addr += bytes > 8 ? 8 : 0;
    count[0] -= bytes > 8 ? 8 : 0;
#endif
    transfer_start(&x, req, blocking);
}

void remote_acc(const struct target *t, int datatype, const void *scale, const void *src,
                size_t bytes, struct handle *req, bool blocking)
{
    int count[1] = {(int)bytes};
    struct transfer x = {.op = TRANSFER_ACC,
                         .datatype = datatype,
                         .scale = scale,
                         .local = (char *)src,
                         .remote = *t,
                         .d = {0, count, NULL, NULL}};
    transfer_start(&x, req, blocking);
}

void strided_remote_put(const struct target *t, const struct stride_desc *d, const char *src,
                        struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_PUT, .local = (char *)src, .remote = *t, .d = *d};
    transfer_start(&x, req, blocking);
}

void strided_remote_get(const struct target *t, const struct stride_desc *d, char *dst,
                        struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_GET, .local = dst, .remote = *t, .d = *d};
    transfer_start(&x, req, blocking);
}

void strided_remote_acc(const struct target *t, const struct stride_desc *d, int datatype,
                        const void *scale, const char *src, struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_ACC,
                         .datatype = datatype,
                         .scale = scale,
                         .local = (char *)src,
                         .remote = *t,
                         .d = *d};
    transfer_start(&x, req, blocking);
}

void vector_remote_put(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking)
{
    struct transfer x = {
        .op = TRANSFER_PUT, .n = n, .bytes = bytes, .locals = local, .remotes = ts};
    transfer_start(&x, req, blocking);
}

void vector_remote_get(const struct target *ts, void *const *local, int n, size_t bytes,
                       struct handle *req, bool blocking)
{
    struct transfer x = {
        .op = TRANSFER_GET, .n = n, .bytes = bytes, .locals = local, .remotes = ts};
    transfer_start(&x, req, blocking);
}

void vector_remote_acc(const struct target *ts, void *const *local, int n, size_t bytes,
                       int datatype, const void *scale, struct handle *req, bool blocking)
{
    struct transfer x = {.op = TRANSFER_ACC,
                         .datatype = datatype,
                         .scale = scale,
                         .n = n,
                         .bytes = bytes,
                         .locals = local,
                         .remotes = ts};
    transfer_start(&x, req, blocking);
}

/* ---- Rmw, locks and fences ---- */

/* Sends one payload-free request and waits for its reply; returns the reply's value. */
static int64_t message_and_wait(const struct target *t, enum ds_op op, uint64_t len, int rmw_op,
                                int64_t value, const char *what)
{
    rt_lock();
    dgram_fence(t->node); /* RC after UD: what went over UD is applied first */
    if (op == DS_LOCK)
        request_lock_reserve();
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
    request_post(c, &r);
    handle_wait(&done);
    if (op == DS_LOCK) {
        c->io->lock_waits--;
        request_lock_granted();
    }
    conn_unpin(c);
    rt_unlock();
    return result;
}

long remote_rmw(const struct target *t, int op, long value)
{
    size_t size = (op == ARMCI_FETCH_AND_ADD || op == ARMCI_SWAP) ? sizeof(int) : sizeof(long);
    /* Priced like a put of its operand: over UD when the node has no ready connection. */
    int count[1] = {(int)size};
    struct transfer like = {.op = TRANSFER_PUT, .remote = *t, .d = {0, count, NULL, NULL}};
    rt_lock();
    if (path_is_datagram(t->node, &like, true)) {
        long old = dgram_rmw(t, op, value, size);
        rt_unlock();
        return old;
    }
    rt_unlock();
    return (long)message_and_wait(t, DS_RMW, size, op, value, "read-modify-write");
}

/*
 * Locks and unlocks go over RC, also with the hybrid path on: a lock request
 * waiting in the queue of a mutex would hold its slot of the node's UD window
 * (its answer is still to come), and with threads the requests behind it
 * could fill the window while the unlock that would grant it waits for room
 * (seen in the soak suite). The data server serves no lock over UD:
 * dgram_server.c refuses ops 5 and 6 (once lock and unlock) as unknown ops.
 */
void remote_lock(const struct target *t)
{
    message_and_wait(t, DS_LOCK, sizeof(struct ticket_lock), 0, 0, "lock");
}

/*
 * Without recovery an unlock is fire-and-forget: RC delivers it. With recovery it is waited
 * for: if the connection breaks before the server has it, only this rank can send it again,
 * and a rank that has gone on to wait in MPI would hold every ARMCI_Lock of the mutex
 * (and the MPI step it waits for) forever.
 */
void remote_unlock(const struct target *t)
{
    /* Writes issued before on this connection land first (RC order); those that went over
     * UD are drained first. */
    rt_lock();
    dgram_fence(t->node);
    struct conn *c = conn_get(t->node);
    struct handle done = {0};
#if ARMCI_MUTANT_IS(unlock_unwaited)
    bool wait = false;
#else
    bool wait = replay_log_on();
#endif
    struct request_desc r = {.msg = {.op = DS_UNLOCK, .len = sizeof(struct ticket_lock)},
                             .t = t,
                             .req = wait ? &done : handle_implicit(),
                             .what = "unlock"};
    request_post(c, &r);
    if (wait)
        handle_wait(&done);
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
    dgram_fence(node);
    struct conn *c = cm_conn_if_exists(node);
    if (c)
        conn_fence(c);
    rt_unlock();
}

void remote_fence_all(void)
{
    rt_lock();
    dgram_fence_all();
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
    bounce_pool_trim();
    rt_unlock();
}
