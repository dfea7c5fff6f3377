/* The client endpoint: CQ, reply buffers, bounce buffers, in-flight records, posting. */
#include "transport/client.h"
#include "transport/conn_queue.h"
#include "core/mutant.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/runtime.h"
#include "transport/target.h"
#include "core/topology.h"
#include "core/error.h"
#include "core/memstat.h"
#include "verbs/memory.h"
#include "odcm/cm.h"
#include "transport/progress.h"
#include "core/util.h"
#include "verbs/device.h"
#include "dataserver/protocol.h"
#include "transport/replies.h"
#include "transport/route.h"
#include "transport/send_queue.h"

struct client_ep ep;

/* Every process can have this many send WRs posted over all its connections. */
#define CLIENT_SEND_BUDGET 1024
/* Replies that can be outstanding over all connections (one receive buffer each). */
#define CLIENT_REPLY_BUFS 256
#define REPLY_BUF_SIZE    64

static struct work *work_free;

/*
 * Messages awaiting a reply, by token. A token is a slot index and that
 * slot's generation, never an address: a reply with a token we did not
 * hand out, an old one, or one arriving on another connection's QP is
 * dropped instead of being followed as a pointer.
 */
struct reply_slot {
    struct work *work; /* NULL: free */
    uint32_t generation;
    uint32_t next_free;
};
static struct reply_slot *reply_slots;
static uint32_t nreply_slots, reply_free_head = UINT32_MAX;

static uint64_t token_issue(struct work *f)
{
    if (reply_free_head == UINT32_MAX) {
        uint32_t grown = nreply_slots ? 2 * nreply_slots : 64;
        reply_slots = xrealloc(reply_slots, sizeof(*reply_slots) * grown);
        memstat_add(MEM_REPLY_SLOTS, (long)(sizeof(*reply_slots) * (grown - nreply_slots)));
        for (uint32_t i = grown; i-- > nreply_slots;) {
            reply_slots[i] = (struct reply_slot){.next_free = reply_free_head};
            reply_free_head = i;
        }
        nreply_slots = grown;
    }
    uint32_t i = reply_free_head;
    reply_free_head = reply_slots[i].next_free;
    reply_slots[i].work = f;
    return (uint64_t)reply_slots[i].generation << 32 | i;
}

struct work *token_lookup(uint64_t token, uint32_t qp_num)
{
    uint32_t i = (uint32_t)token;
    if (i >= nreply_slots)
        return NULL;
    struct reply_slot *s = &reply_slots[i];
    if (!s->work || s->generation != (uint32_t)(token >> 32) || s->work->conn->qp->qp_num != qp_num)
        return NULL;
    return s->work;
}

/* f's reply came: its token is void from now on, its slot free again. */
static void token_release(struct work *f)
{
    struct reply_slot *s = &reply_slots[(uint32_t)f->token];
    s->work = NULL;
    s->generation++;
    s->next_free = reply_free_head;
    reply_free_head = (uint32_t)f->token;
}

bool answers_match(const struct work *last, uint32_t n)
{
    if (!last->in_order || n == 0)
        return false;
    const struct work *w = last->conn->io->awaiting_head;
    for (uint32_t k = 1; w && k < n; k++)
        w = w->answer_next;
    return w == last;
}

struct work *answer_next(struct conn *c)
{
    struct work *w = c->io->awaiting_head;
    c->io->awaiting_head = w->answer_next;
    if (!c->io->awaiting_head)
        c->io->awaiting_tail = NULL;
    token_release(w);
    return w;
}

struct work *answer_lock(struct work *f)
{
    token_release(f);
    return f;
}

static void setup_bounces(void)
{
    size_t total = cfg.bounce_size * (size_t)cfg.bounce_count;
    ep.bounce_region = xmalloc_registrable(total);
    /* Remote write too: the data server writes packed get data straight into them. */
    ep.bounce_mr = net_reg("ARMCI_Init", ep.bounce_region, total, true);
    ep.bounce_all = xcalloc((size_t)cfg.bounce_count, sizeof(struct bounce));
    memstat_add(MEM_BUF_BOUNCE, (long)(total + sizeof(struct bounce) * (size_t)cfg.bounce_count));
    for (int i = 0; i < cfg.bounce_count; i++) {
        struct bounce *b = &ep.bounce_all[i];
        b->buf = (char *)ep.bounce_region + (size_t)i * cfg.bounce_size;
        b->lkey = ep.bounce_mr->lkey;
        b->rkey = ep.bounce_mr->rkey;
        b->next = ep.free_bounces;
        ep.free_bounces = b;
    }
    ep.bounces_free = cfg.bounce_count;
}

/*
 * Completions that can wait in the client CQ at once, each kind bounded by
 * the constant that limits it:
 *   signaled sends on the RC QPs  CLIENT_SEND_BUDGET (sq_room keeps ep.signaled below it;
 *                                 unsignaled requests complete only in error)
 *   a QP in error                 ARMCI_SEND_WQES: an error completion for each of its
 *                                 requests, signaled or not (the first one ends the job)
 *   reply receives                CLIENT_REPLY_BUFS (the SRQ's buffers, each reposted only
 *                                 after its completion was polled)
 *   the UD channel                cm_client_cq_entries(): twice its send buffers (16) and
 *                                 receive buffers (64), since completions from before a
 *                                 reset of its QP may still be there (ud.c); 0 in static mode
 * = 1024 + 64 + 256 + 160 = 1504 in on-demand mode by default. A CQ of that many entries
 * cannot overrun (an overrun would put every QP on it in error).
 */
static int client_cq_bound(void)
{
    return CLIENT_SEND_BUDGET + cfg.send_wqes + CLIENT_REPLY_BUFS + cm_client_cq_entries();
}

_Static_assert(CLIENT_SEND_BUDGET > 0 && CLIENT_REPLY_BUFS > 0 &&
                   CLIENT_SEND_BUDGET + CLIENT_REPLY_BUFS < (1 << 20),
               "client CQ terms out of range");

void client_init(void)
{
    route_init(vdev.provider);
    ep.send_budget = CLIENT_SEND_BUDGET;
    /* endpoint_create checks that the provider's CQ really has this many entries. */
    endpoint_create(&ep.cq, "client", client_cq_bound(), true);
    endpoint_on(&ep.cq, WR_TAG_POINTER, on_send_completion, NULL);
    endpoint_on(&ep.cq, WR_TAG_CONN, on_send_completion, NULL);
    recv_pool_create(&ep.replies, "client reply buffers", CLIENT_REPLY_BUFS, REPLY_BUF_SIZE,
                     vdev.pd, &ep.cq, WR_TAG_RECV, on_reply, NULL);
    ep.reply_slots = CLIENT_REPLY_BUFS;
    setup_bounces();
}

void client_cm_env(struct cm_client_env *env)
{
    *env = (struct cm_client_env){.cq = &ep.cq,
                                  .srq = ep.replies.srq,
                                  .max_inline = 128,
                                  .on_ready = conn_on_ready,
                                  .on_destroy = conn_forget,
                                  .on_insert = conn_insert,
                                  .busy = conn_busy,
                                  .waits_for_lock = conn_waits_for_lock};
}

void client_fini(void)
{
    conns_fini();
    if (!ep.cq.cq)
        return;
    recv_pool_destroy(&ep.replies);
    endpoint_destroy(&ep.cq);
    net_dereg(ep.bounce_mr);
    free(ep.bounce_region);
    free(ep.bounce_all);
    memstat_add(MEM_BUF_BOUNCE,
                -(long)((cfg.bounce_size + sizeof(struct bounce)) * (size_t)cfg.bounce_count));
    while (work_free) {
        struct work *f = work_free;
        work_free = f->next_free;
        memstat_add(MEM_WORK, -(long)sizeof(*f));
        free(f);
    }
    memstat_add(MEM_REPLY_SLOTS, -(long)(sizeof(*reply_slots) * nreply_slots));
    free(reply_slots);
    reply_slots = NULL;
    nreply_slots = 0;
    reply_free_head = UINT32_MAX;
    ep = (struct client_ep){0};
}

struct bounce *bounce_get(void)
{
    while (!ep.free_bounces)
        progress_wait();
    struct bounce *b = ep.free_bounces;
    ep.free_bounces = b->next;
    ep.bounces_free--;
    return b;
}

void bounce_free(struct bounce *b)
{
    b->next = ep.free_bounces;
    ep.free_bounces = b;
    ep.bounces_free++;
}

struct work *work_new(enum work_kind kind, struct conn *c, struct handle *req)
{
    struct work *f = work_free;
    if (f) {
        work_free = f->next_free;
    } else {
        f = xmalloc(sizeof(*f));
        memstat_add(MEM_WORK, (long)sizeof(*f));
    }
    *f = (struct work){.kind = kind, .conn = c, .req = req, .fenced = true, .seq = c->io->issued++};
    f->older = c->io->newest;
    if (c->io->newest)
        c->io->newest->newer = f;
    else
        c->io->oldest = f;
    c->io->newest = f;
    c->io->outstanding++;
    ep.outstanding++;
    if (req)
        handle_op_started(req);
    return f;
}

void work_not_fenced(struct work *f)
{
    struct conn *c = f->conn;
    if (!f->fenced)
        return;
    if (f->older)
        f->older->newer = f->newer;
    else
        c->io->oldest = f->newer;
    if (f->newer)
        f->newer->older = f->older;
    else
        c->io->newest = f->older;
    f->fenced = false;
}

void work_retire(struct work *f)
{
    struct conn *c = f->conn;
    work_not_fenced(f);
    c->io->outstanding--;
    c->io->updates_done += f->server_update;
    ep.outstanding--;
    if (f->req)
        handle_op_done(f->req);
    f->next_free = work_free;
    work_free = f;
}

/* Lock requests of one process waiting for their grant at once (reserve_lock_request). */
#define MAX_LOCK_REQUESTS (CLIENT_REPLY_BUFS / 4)

void reserve_lock_request(void)
{
    while (ep.reply_slots <= 0 || ep.lock_requests >= MAX_LOCK_REQUESTS)
        progress_wait();
    ep.reply_slots--;
    ep.lock_requests++;
}

void lock_granted(void)
{
    ep.lock_requests--;
}

void reserve_message(struct conn *c)
{
    while (c->credits <= 0 || ep.reply_slots <= 0)
        progress_wait();
    c->credits--;
    ep.reply_slots--;
}

static void post_send_wr(struct conn *c, struct ibv_send_wr *wr, const char *what)
{
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(c->qp, wr, &bad);
    if (rc)
        armci_die(NULL, "ibv_post_send (%s to node %d) failed: %s", what, c->node, strerror(rc));
}

void rdma_batch_flush(struct rdma_batch *b)
{
    if (!b->n)
        return;
    b->wr[b->n - 1].next = NULL;
    post_send_wr(b->c, &b->wr[0],
                 b->n > 1                              ? "chain of RDMA operations"
                 : b->wr[0].opcode == IBV_WR_RDMA_READ ? "RDMA read"
                                                       : "RDMA write");
    b->n = 0;
}

void rdma_batch_add(struct rdma_batch *b, struct conn *c, enum ibv_wr_opcode op, void *local,
                    uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, struct work *w,
                    bool last, bool wanted)
{
    /* Never wait for completions while holding work requests not yet posted. */
    if (b->n && (b->c != c || b->n == RDMA_BATCH_MAX || !sq_room(c)))
        rdma_batch_flush(b);
    sq_wait_room(c);
    b->c = c;
    int i = b->n++;
    b->sge[i] = (struct ibv_sge){.addr = (uintptr_t)local, .length = (uint32_t)len, .lkey = lkey};
    b->wr[i] = (struct ibv_send_wr){
        .sg_list = &b->sge[i],
        .num_sge = 1,
        .opcode = op,
        .wr = {.rdma = {.remote_addr = raddr, .rkey = rkey}},
    };
    /* Small writes are copied into the WR: the source is reusable at once. */
    if (op == IBV_WR_RDMA_WRITE && len <= c->max_inline)
        b->wr[i].send_flags |= IBV_SEND_INLINE;
    sq_prepare(c, &b->wr[i], w, last, wanted);
    sq_note_remote(c, raddr, rkey);
    if (i > 0)
        b->wr[i - 1].next = &b->wr[i];
    w->what = op == IBV_WR_RDMA_WRITE ? "RDMA write" : "RDMA read";
}

void post_message(struct conn *c, struct bounce *b, size_t len, const struct ibv_sge *payload,
                  int npayload, struct work *inf)
{
    sq_wait_room(c);
    struct ibv_sge sge[RC_QP_MAX_SGE];
    size_t total = len;
    sge[0] = (struct ibv_sge){.addr = (uintptr_t)b->buf, .length = (uint32_t)len, .lkey = b->lkey};
    for (int i = 0; i < npayload; i++) {
        sge[1 + i] = payload[i];
        total += payload[i].length;
    }
    struct ibv_send_wr wr = {
        .sg_list = sge,
        .num_sge = 1 + npayload,
        .opcode = IBV_WR_SEND,
    };
    if (total <= c->max_inline)
        wr.send_flags |= IBV_SEND_INLINE;
    inf->bounce = b;
    inf->events_left = 2;
    inf->what = "data-server request";
    sq_prepare(c, &wr, inf, true, true); /* its send completion frees the bounce buffer */
    post_send_wr(c, &wr, inf->what);
}

/* A request about t (offset bytes in) to the data server of c's node; payload goes after it. */
struct ds_message *message_begin(struct conn *c, int op, const struct target *t, size_t offset,
                                 uint64_t len, struct bounce **b)
{
    reserve_message(c);
    *b = bounce_get();
    struct ds_message *rq = (*b)->buf;
    memset(rq, 0, sizeof(*rq));
    rq->op = (uint8_t)op;
    rq->origin = rt.me;
    rq->target_local = topo_local_index(t->proc);
    rq->addr = t->server_addr + offset;
    rq->len = len;
    sq_note_remote(c, t->server_addr, t->rkey); /* a place a flush or a probe may name */
    return rq;
}

void message_send(struct conn *c, struct ds_message *rq, struct bounce *b, size_t payload,
                  struct work *f, const char *what)
{
    message_send_from(c, rq, b, NULL, 0, payload, f, what);
}

void message_send_from(struct conn *c, struct ds_message *rq, struct bounce *b,
                       const struct ibv_sge *from, int nfrom, size_t payload, struct work *f,
                       const char *what)
{
    f->token = rq->token = token_issue(f);
    /* Every request but a lock's is answered in order (dataserver/protocol.h). */
    f->in_order = rq->op != DS_LOCK;
    if (f->in_order) {
        f->answer_next = NULL;
        if (c->io->awaiting_tail)
            c->io->awaiting_tail->answer_next = f;
        else
            c->io->awaiting_head = f;
        c->io->awaiting_tail = f;
    }
    if (nfrom)
        post_message(c, b, sizeof(*rq), from, nfrom, f);
    else
        post_message(c, b, sizeof(*rq) + payload, NULL, 0, f);
    f->what = what;
    f->server_update = ds_op_is_update(rq->op);
    c->io->updates_sent += f->server_update;
}

void wait_server_updates(struct conn *c)
{
#if ARMCI_MUTANT_IS(order_wait_skipped)
    return;
#endif
    uint64_t sent = c->io->updates_sent;
    while (c->io->updates_done < sent)
        progress_wait();
}

void conn_fence(struct conn *c)
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
