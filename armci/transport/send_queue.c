/* The send queue of a client connection: room, selective signaling, retiring (send_queue.h). */
#include "transport/send_queue.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memstat.h"
#include "core/util.h"
#include "core/wr_id.h"
#include "odcm/cm.h"
#include "transport/client.h"
#include "transport/progress.h"

/* Connections with lazy works that no signaled request covers yet. */
static struct conn **dirty;
static int ndirty, capdirty;

static int signal_every(const struct conn *c)
{
    return c->sq_depth >= 8 ? c->sq_depth / 4 : 1;
}

bool sq_room(const struct conn *c)
{
    return c->io->sq_posted < c->sq_depth && ep.signaled < ep.send_budget;
}

void sq_wait_room(struct conn *c)
{
    while (!sq_room(c))
        progress_wait();
}

static void mark_dirty(struct conn *c)
{
    if (c->io->sq_dirty)
        return;
    if (ndirty == capdirty) {
        capdirty = capdirty ? 2 * capdirty : 8;
        dirty = xrealloc(dirty, sizeof(*dirty) * (size_t)capdirty);
    }
    dirty[ndirty++] = c;
    c->io->sq_dirty = true;
}

/* Accounts a signaled request: it retires the run before it and the lazy works in it. */
static void push_signal(struct conn *c, struct ibv_send_wr *wr, uint64_t wr_id)
{
    if (!c->io->sq_ring) {
        c->io->sq_ring = xcalloc((size_t)c->sq_depth, sizeof(*c->io->sq_ring));
        memstat_add(MEM_SEND_QUEUES, (long)(sizeof(*c->io->sq_ring) * (size_t)c->sq_depth));
    }
    int tail = (c->io->sq_ring_head + c->io->sq_ring_count++) % c->sq_depth;
    c->io->sq_ring[tail] = (struct sq_retire){.wrs = (uint32_t)c->io->sq_unsignaled + 1,
                                              .lazy = (uint32_t)c->io->sq_lazy_pending};
    c->io->sq_unsignaled = 0;
    c->io->sq_lazy_pending = 0;
    c->io->sq_posted++;
    ep.signaled++;
    wr->send_flags |= IBV_SEND_SIGNALED;
    wr->wr_id = wr_id;
}

void sq_prepare(struct conn *c, struct ibv_send_wr *wr, struct work *w, bool last, bool wanted)
{
    if ((last && wanted) || c->io->sq_unsignaled + 1 >= signal_every(c)) {
        /* A signal that is not the work's last request vouches for the run, not for w. */
        push_signal(c, wr, last ? (uintptr_t)w : wr_id_make((uintptr_t)c, WR_TAG_CONN));
        return;
    }
    /* Unsignaled: an error completion still names the connection. */
    wr->send_flags &= ~(unsigned)IBV_SEND_SIGNALED;
    wr->wr_id = wr_id_make((uintptr_t)c, WR_TAG_CONN);
    c->io->sq_unsignaled++;
    c->io->sq_posted++;
    if (!last)
        return;
    w->lazy_next = NULL;
    if (c->io->lazy_tail)
        c->io->lazy_tail->lazy_next = w;
    else
        c->io->lazy_head = w;
    c->io->lazy_tail = w;
    c->io->sq_lazy_pending++;
    mark_dirty(c);
}

void sq_note_remote(struct conn *c, uint64_t addr, uint32_t rkey)
{
    c->io->flush_addr = addr;
    c->io->flush_rkey = rkey;
}

struct sq_retire sq_completed(struct conn *c)
{
    if (c->io->sq_ring_count == 0)
        armci_die(NULL, "a send completion from node %d that no signaled request accounts for",
                  c->node);
    struct sq_retire r = c->io->sq_ring[c->io->sq_ring_head];
    c->io->sq_ring_head = (c->io->sq_ring_head + 1) % c->sq_depth;
    c->io->sq_ring_count--;
    c->io->sq_posted -= (int)r.wrs;
    ep.signaled--;
    return r;
}

struct work *sq_pop_lazy(struct conn *c)
{
    struct work *w = c->io->lazy_head;
    if (!w)
        armci_die(NULL,
                  "internal error: a completion from node %d retires more lazy works "
                  "than were posted",
                  c->node);
    c->io->lazy_head = w->lazy_next;
    if (!c->io->lazy_head)
        c->io->lazy_tail = NULL;
    return w;
}

/* An empty signaled RDMA write: its completion retires every lazy work before it. */
static bool flush(struct conn *c)
{
    if (!c->io->sq_lazy_pending)
        return true;
    if (!sq_room(c))
        return false; /* signaled requests are in flight: try again after they complete */
    struct ibv_send_wr wr = {
        .opcode = IBV_WR_RDMA_WRITE,
        .wr = {.rdma = {.remote_addr = c->io->flush_addr, .rkey = c->io->flush_rkey}},
    };
    push_signal(c, &wr, wr_id_make((uintptr_t)c, WR_TAG_CONN));
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(c->qp, &wr, &bad);
    if (rc)
        armci_die(NULL, "ibv_post_send (flush to node %d) failed: %s", c->node, strerror(rc));
    return true;
}

void sq_flush_all(void)
{
    int kept = 0;
    for (int i = 0; i < ndirty; i++) {
        struct conn *c = dirty[i];
        if (flush(c))
            c->io->sq_dirty = false;
        else
            dirty[kept++] = c;
    }
    ndirty = kept;
}

void sq_forget(struct conn *c)
{
    for (int i = 0; i < ndirty; i++) {
        if (dirty[i] == c) {
            dirty[i] = dirty[--ndirty];
            break;
        }
    }
    if (c->io->sq_ring)
        memstat_add(MEM_SEND_QUEUES, -(long)(sizeof(*c->io->sq_ring) * (size_t)c->sq_depth));
    free(c->io->sq_ring);
    c->io->sq_ring = NULL;
    if (ndirty == 0) {
        free(dirty);
        dirty = NULL;
        capdirty = 0;
    }
}
