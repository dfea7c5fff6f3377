/* Data-server replies: the reply buffers, and answering the messages a reply names (replies.h). */
#include "transport/replies.h"

#include "core/error.h"
#include "core/mutant.h"
#include "core/wr_id.h"
#include "wire/protocol.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/replay_log.h"
#include "transport/requests.h"
#include "transport/work.h"
#include "verbs/device.h"
#include "verbs/endpoint.h"

#define REPLY_BUF_SIZE 64

static struct recv_pool replies; /* one buffer per reply outstanding */

/* One message answered: its value or status where it wanted them, then its completion. */
static void answered(struct work *f, int status, int64_t value)
{
    request_slot_return();
    send_rec_answered(f->conn, f);
    /* A rejection is the caller's bug, unless the caller asked for the status itself. */
    if (status != DS_OK && !f->status)
        armci_die(NULL, "the data server of node %d rejected a %s: %s", f->conn->node, f->what,
                  ds_status_name(status));
    if (f->result)
        *f->result = value;
    if (f->status)
        *f->status = status;
    if (--f->events_left == 0)
        work_complete(f);
}

/*
 * A lock request is answered once (granted or refused at once) or twice (queued, then granted or
 * refused): it reserved a reply slot for each of the two answers (request_lock_reserve).
 */
static void lock_answered(struct work *f, int status)
{
    if (status == DS_QUEUED) {
        f->lock_queued = true;
        request_slot_return();
        return;
    }
    if (!f->lock_queued)
        request_slot_return(); /* the slot of a queued notice that did not come */
    answered(token_take_lock(f), status, 0);
}

static void in_order_answered(struct conn *c, struct ds_reply r)
{
#if ARMCI_MUTANT_IS(reply_batch_cut)
    r.answers -= r.answers > 2;
#endif
    for (uint32_t k = 1; k < r.answers; k++)
        answered(token_take_next(c), DS_OK, 0);
    answered(token_take_next(c), r.status, r.value);
}

/*
 * A reply answers the lock request its token names, or the in-order
 * messages of its connection up to that one (wire/protocol.h): all
 * of them succeeded but the last, whose status and value the reply carries.
 * A reply that does not fit what this process awaits is dropped.
 */
static void on_reply(void *ctx, const struct ibv_wc *wc)
{
    struct ds_reply r = *(const struct ds_reply *)recv_pool_buffer(&replies, wc);
    struct work *last = token_lookup(r.token, wc->qp_num);
    bool fits = last && (r.answers == 0 ? !last->in_order : tokens_match(last, r.answers));
    if (!fits) {
        armci_warn("dropped a data-server reply with unknown token %llx (%u answers) on QP %u",
                   (unsigned long long)r.token, r.answers, wc->qp_num);
        return; /* its buffer is reposted: the count of free reply slots is unchanged */
    }
    struct conn *c = last->conn;
#if !ARMCI_MUTANT_IS(credits_never_returned)
    c->io->credits += r.credits;
#endif
    if (r.answers == 0 && r.status == DS_QUEUED && last->lock_queued) {
        /* A lock request sent again after its connection broke is told again that it waits
         * (with the credit its SEND took): anything else is the server's mistake. */
        if (!c->io->has_replayed)
            armci_warn("dropped a second queued notice for lock token %llx on QP %u",
                       (unsigned long long)r.token, wc->qp_num);
        return;
    }
    if (r.answers == 0)
        lock_answered(last, r.status);
    else
        in_order_answered(c, r);
}

void replies_init(struct endpoint *cq)
{
    recv_pool_create(&replies, "client reply buffers", MEM_BUF_RECV, REPLY_BUFS, REPLY_BUFS,
                     REPLY_BUF_SIZE, vdev.pd, cq, WR_TAG_RECV, on_reply, NULL);
}

void replies_fini(void)
{
    recv_pool_destroy(&replies);
}

struct ibv_srq *replies_srq(void)
{
    return replies.srq;
}
