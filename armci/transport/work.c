/* Work records, the bounce buffers they hold, the in-flight list fences wait on, and reply
 * tokens (work.h). */
#include "transport/work.h"

#include <stdlib.h>
#include <string.h>

#include "common/fifo.h"
#include "core/config.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/util.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "verbs/memory.h"

static struct work *work_free;
static int outstanding; /* operations not yet complete, over all connections */

struct reply_slot {
    struct work *work; /* NULL: free */
    uint32_t generation;
    uint32_t next_free;
};
static struct reply_slot *reply_slots;
static uint32_t nreply_slots, reply_free_head = UINT32_MAX;

/* ---- bounce and small buffers ---- */

/* Bounce buffers a process starts with: what a few transfers in flight need. The pool doubles
 * up to ARMCI_BOUNCE_COUNT when every one is taken, and gives back at fences what the last
 * second did not need (bounce_pool_trim). */
#if ARMCI_MUTANT_IS(bounce_pool_full)
#define BOUNCE_INITIAL 32 /* the bug: every bounce buffer registered from the start */
#else
#define BOUNCE_INITIAL 4
#endif
/* Small buffers a process starts with; they double up to ARMCI_BOUNCE_COUNT too. */
#define SMALL_INITIAL 4

static struct buffer_pool bounces, smalls;
static void (*wait_progress)(void);

void bounce_pool_init(void (*wait)(void))
{
    wait_progress = wait;
    /* Remote write too: the data server writes packed get data straight into them. */
    buffer_pool_create(&bounces, "ARMCI_Init", "bounce buffers",
                       MIN(BOUNCE_INITIAL, cfg.bounce_count), cfg.bounce_count, cfg.bounce_size,
                       true, MEM_BUF_BOUNCE);
    /* Only this process's device reads (a SEND, a write) or writes (an atomic) them. */
    buffer_pool_create(&smalls, "ARMCI_Init", "small buffers", MIN(SMALL_INITIAL, cfg.bounce_count),
                       cfg.bounce_count, small_buffer_size(), false, MEM_BUF_SMALL);
}

void bounce_pool_trim(void)
{
#if ARMCI_MUTANT_IS(bounce_never_trimmed)
    return; /* the bug: a burst's bounce buffers stay registered for the job's life */
#endif
    double now = now_seconds();
    buffer_pool_trim(&bounces, now);
    buffer_pool_trim(&smalls, now);
}

void bounce_pool_fini(void)
{
    buffer_pool_destroy(&bounces);
    buffer_pool_destroy(&smalls);
}

/* A free buffer of p, waiting (making progress) for one. */
static struct pool_buffer *pool_wait(struct buffer_pool *p)
{
    struct pool_buffer *b;
    while (!(b = buffer_pool_get(p)))
        wait_progress();
    return b;
}

struct pool_buffer *bounce_wait(void)
{
    return pool_wait(&bounces);
}

struct pool_buffer *send_buffer_wait(size_t bytes)
{
#if ARMCI_MUTANT_IS(small_buffer_overrun)
    bytes = 0; /* the bug: a small buffer whatever the size */
#endif
    return pool_wait(bytes <= smalls.size ? &smalls : &bounces);
}

void buffer_free(struct pool_buffer *b)
{
    buffer_pool_give_back(b);
}

/* ---- works ---- */

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
    outstanding++;
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

void work_complete(struct work *f)
{
    if (f->on_done)
        f->on_done(f);
    if (f->data)
        buffer_free(f->data);
    if (f->bounce)
        buffer_free(f->bounce);
    struct conn *c = f->conn;
    if (f->fenced) /* an operation (not a probe) got through: the connection works again */
        c->io->breaks_in_a_row = 0;
    work_not_fenced(f);
    c->io->outstanding--;
    c->io->updates_done += f->server_update;
    outstanding--;
    if (f->req)
        handle_op_done(f->req);
    f->next_free = work_free;
    work_free = f;
}

int works_outstanding(void)
{
    return outstanding;
}

void works_hold(struct conn *c, struct handle *req)
{
    c->io->outstanding++;
    outstanding++;
    handle_op_started(req);
}

void works_unhold(struct conn *c, struct handle *req)
{
    c->io->outstanding--;
    outstanding--;
    handle_op_done(req);
}

void works_fini(void)
{
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
    outstanding = 0;
}

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

uint64_t work_await_reply(struct work *f, bool in_order)
{
    struct conn *c = f->conn;
    f->token = token_issue(f);
    f->in_order = in_order;
    if (in_order) {
        FIFO_PUSH(c->io->awaiting_head, c->io->awaiting_tail, f, answer_next);
    }
    return f->token;
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

bool tokens_match(const struct work *last, uint32_t n)
{
    if (!last->in_order || n == 0)
        return false;
    const struct work *w = last->conn->io->awaiting_head;
    for (uint32_t k = 1; w && k < n; k++)
        w = w->answer_next;
    return w == last;
}

struct work *token_take_next(struct conn *c)
{
    struct work *w = c->io->awaiting_head;
    FIFO_DROP_HEAD(c->io->awaiting_head, c->io->awaiting_tail, answer_next);
    token_release(w);
    return w;
}

struct work *token_take_lock(struct work *f)
{
    token_release(f);
    return f;
}
