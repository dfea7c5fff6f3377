/*
 * The inter-node data path: every put, get and accumulate towards another
 * node, contiguous (a strided box of 0 levels), strided or vector, enters
 * through transfer_start (the remote_* front doors are in remote.c), which
 * pins the connection and queues the operation while the connection is
 * being set up (conn_queue.c), and issue_box chooses its path:
 *   - accumulates always go to the data server, which applies them under
 *     the target's accumulate lock (server_path.c);
 *   - puts and gets whose chunks are a request or longer go by RDMA
 *     (rdma_path.c); so do contiguous ones;
 *   - other strided puts and gets are priced both ways by the cost model of
 *     route.h (RDMA per chunk, or the server per request, in place or
 *     copied) and take the cheaper; a put whose source is one registered
 *     run of 64 KiB or more may be pulled by the server instead;
 *   - vectors of small segments go many to a request (vector_path.c),
 *     larger segments one by one as contiguous transfers.
 */
#include "transport/transfer.h"

#include <stddef.h>

#include "core/acc.h"
#include "core/threads.h"
#include "odcm/cm.h"
#include "transport/client.h"
#include "transport/conn_queue.h"
#include "transport/pieces.h"
#include "transport/rdma_path.h"
#include "transport/route.h"
#include "transport/server_path.h"
#include "transport/vector_path.h"
#include "verbs/memory.h"

static void issue_box(struct conn *c, const struct transfer *x, struct handle *req, bool blocking)
{
    size_t unit = x->op == TRANSFER_ACC ? acc_elem_size(x->datatype) : 1;
    if (x->op == TRANSFER_ACC) {
        struct server_plan pl = plan_server(c, x, unit);
        server_put(c, x, &pl, req, blocking);
        return;
    }
    /* Chunks of a request or more: the server would only cut them up. */
    if (x->d.levels == 0 || (size_t)x->d.count[0] > request_room()) {
        rdma_transfer(c, x, req, blocking);
        return;
    }
    /* A source or destination that is one registered run: the server moves the data itself. */
    size_t extent = stride_extent(local_strides(x), x->d.count, x->d.levels);
    uint32_t lkey, rkey;
    bool direct =
        local_contiguous(x) && extent != SIZE_MAX && net_user_keys(x->local, extent, &lkey, &rkey);
    size_t bytes = (size_t)x->d.count[0] * stride_chunks(x->d.count, x->d.levels);
    if (x->op == TRANSFER_PUT && direct && bytes >= PULL_MIN_BYTES) {
        if (route_via_server(x, pieces_of(x, pull_piece_bytes(c, x)), true))
            pull_put(c, x, rkey, req, blocking);
        else
            rdma_transfer(c, x, req, blocking);
        return;
    }
    if (x->op == TRANSFER_PUT) {
        struct server_plan pl = plan_server(c, x, unit);
        if (route_via_server(x, pieces_of(x, pl.max_bytes), pl.in_place))
            server_put(c, x, &pl, req, blocking);
        else
            rdma_transfer(c, x, req, blocking);
        return;
    }
    if (route_via_server(x, pieces_of(x, get_piece_bytes(c, x, direct)), direct))
        get_packed(c, x, req);
    else
        rdma_transfer(c, x, req, blocking);
}

/* Small segments travel many to a request; large ones as contiguous transfers of their own. */
static void issue_vector(struct conn *c, const struct transfer *x, struct handle *req,
                         bool blocking)
{
    if (vector_send_batched(c, x, req))
        return;
    int count[1] = {(int)x->bytes};
    for (int i = 0; i < x->n; i++) {
        struct transfer one = {.op = x->op,
                               .datatype = x->datatype,
                               .scale = x->scale,
                               .local = x->locals[i],
                               .remote = x->remotes[i],
                               .d = {0, count, NULL, NULL}};
        issue_box(c, &one, req, blocking);
    }
}

void transfer_issue(struct conn *c, const struct transfer *x, struct handle *req, bool blocking)
{
    struct handle done = {0};
    bool wait_here = blocking && x->op == TRANSFER_GET;
    struct handle *r = wait_here ? &done : req;
    if (x->locals)
        issue_vector(c, x, r, blocking);
    else
        issue_box(c, x, r, blocking);
    if (wait_here)
        handle_wait(&done);
}

void transfer_start(const struct transfer *x, struct handle *req, bool blocking)
{
    if (x->locals && x->n == 0)
        return;
    rt_lock();
    const struct target *t = x->locals ? &x->remotes[0] : &x->remote;
    struct conn *c = conn_pin(t->node);
    if (!queue_if_connecting(c, x, req, blocking))
        transfer_issue(conn_wait_ready(c), x, req, blocking);
    conn_put(c);
    rt_unlock();
}
