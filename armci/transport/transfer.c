/*
 * Which path a transfer on a ready connection takes (transfer.h). It
 * arrives from transfer_start (entry.c), directly or from the queue
 * of a connection that was being set up. issue_box looks up the facts the
 * choice needs (the connection's gather limits, whether the local memory
 * is registered) and follows plan_box, the cost model of route.h:
 *   - accumulates always go to the data server, which applies them under
 *     the target's accumulate lock (server_path.c);
 *   - contiguous puts and gets, and those whose chunks are a request or
 *     longer, go by RDMA (rdma_path.c);
 *   - other strided puts and gets are priced both ways (RDMA per chunk, or
 *     the server per request, in place or copied) and take the cheaper; a
 *     put whose source is one registered run may be pulled by the server;
 *   - vectors of small segments go many to a request (vector_path.c),
 *     larger segments one by one as contiguous transfers.
 */
#include "transport/transfer.h"

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "odcm/conn.h"
#include "transport/requests.h"
#include "transport/pieces.h"
#include "transport/progress.h"
#include "transport/rdma_path.h"
#include "transport/route.h"
#include "transport/server_path.h"
#include "transport/vector_path.h"
#include "transport/vector_rdma.h"
#include "verbs/memory.h"

/*
 * What plan_box needs to know about c and x's local memory, looked up only
 * as far as x's kind needs it (a registration lookup each): an accumulate
 * asks whether its source is registered, a get whether its buffer is one
 * registered run, a put both. The user's own memory counts as registered
 * where route_register_local says it is worth a cached registration and
 * the cache has one (net_local_keys). *lkey and *rkey are the keys found;
 * *hold, a cached registration, is released once the transfer is posted.
 */
static struct box_facts box_facts_of(const struct conn *c, const struct transfer *x, uint32_t *lkey,
                                     uint32_t *rkey, struct reg_entry **hold)
{
    struct box_facts f = {.request_room = request_piece_room(),
                          .send_room = request_room(),
                          .bounce_size = cfg.bounce_size,
                          .max_sge = c->max_sge,
                          .server_gather = c->server_gather};
    size_t extent = stride_extent(local_strides(x), x->d.count, x->d.levels);
    if (extent == SIZE_MAX)
        return f;
    bool contiguous = local_contiguous(x);
    bool may_cache = route_register_local(extent);
    /* A get's buffer matters only as one run the server can write into. */
    if (x->op == TRANSFER_GET) {
        f.direct = contiguous && net_local_keys(x->local, extent, may_cache, lkey, rkey, hold);
        return f;
    }
    bool keys = net_local_keys(x->local, extent, may_cache, lkey, rkey, hold);
    f.direct = x->op == TRANSFER_PUT && contiguous && keys;
    f.registered = keys;
    return f;
}

static void issue_box(struct conn *c, const struct transfer *x, struct handle *req, bool blocking)
{
    /* Chunks of a request or more go by RDMA whatever the facts (plan_box says so too). */
    if (x->op != TRANSFER_ACC &&
        (x->d.levels == 0 || (size_t)x->d.count[0] > request_piece_room())) {
        rdma_transfer(c, x, req, blocking);
        return;
    }
    uint32_t lkey = 0, rkey = 0;
    struct reg_entry *hold = NULL;
    struct box_facts facts = box_facts_of(c, x, &lkey, &rkey, &hold);
    struct box_plan plan = plan_box(x, &facts);
    switch (plan.path) {
    case BOX_RDMA:
        rdma_transfer(c, x, req, blocking);
        break;
    case BOX_SERVER_PUT:
        plan.server.lkey = lkey;
        plan.server.rkey = rkey;
        via_server_put(c, x, &plan.server, req, blocking);
        break;
    case BOX_SERVER_PULL:
        via_server_pull(c, x, plan.piece_bytes, rkey, req, blocking);
        break;
    case BOX_SERVER_GET:
        via_server_get(c, x, plan.piece_bytes, facts.direct, rkey, req);
        break;
    }
    net_local_release(hold);
}

/* Short segments travel in one chain of RDMA or many to a request to the server, whichever
 * route.h prices lower; long ones as contiguous transfers of their own. */
static void issue_vector(struct conn *c, const struct transfer *x, struct handle *req,
                         bool blocking)
{
    if (x->bytes < route_vector_threshold()) {
        int per_request = vector_batch(x->op, x->bytes);
        if (route_vector_via_rdma(x, per_request)) {
            rdma_vector(c, x, req, blocking);
            return;
        }
        if (per_request >= 2) {
            vector_send_batched(c, x, per_request, req, blocking);
            return;
        }
    }
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
