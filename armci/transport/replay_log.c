/* Unconfirmed requests of a connection, for its replay (replay_log.h). */
#include "transport/replay_log.h"

#include <stdlib.h>
#include <string.h>

#include "common/fifo.h"
#include "core/config.h"
#include "core/error.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/util.h"
#include "core/wr_id.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/work.h"
#include "verbs/rc_qp.h"

/* Gather entries and inline bytes a logged request holds in place; more go to the heap. */
#define LOGGED_SGE    2
#define LOGGED_INLINE 64

struct logged_wr {
    struct ibv_send_wr wr; /* next and sg_list are set when it is posted again */
    struct ibv_sge sge[LOGGED_SGE];
    struct ibv_sge *more_sge; /* num_sge > LOGGED_SGE */
    void *big_inline;         /* an inline payload longer than LOGGED_INLINE */
    uint64_t data[LOGGED_INLINE / sizeof(uint64_t)];
    struct send_rec *rec; /* a data-server SEND's record */
};

bool replay_log_on(void)
{
    return cfg.recovery_timeout > 0;
}

struct send_rec *send_rec_new(struct pool_buffer *b, uint64_t first_seq,
                              const struct ibv_sge *in_place, int n)
{
    struct send_rec *r = xcalloc(1, sizeof(*r));
    memstat_add(MEM_WORK, (long)sizeof(*r));
    r->bounce = b;
    r->first_seq = first_seq;
#if !ARMCI_MUTANT_IS(replay_headers_only)
    if (n > 0) {
        r->in_place = xmalloc(sizeof(*in_place) * (size_t)n);
        memcpy(r->in_place, in_place, sizeof(*in_place) * (size_t)n);
        r->n_in_place = n;
    }
#endif
    return r;
}

static void send_rec_free(struct send_rec *r)
{
    free(r->in_place);
    buffer_free(r->bounce);
    memstat_add(MEM_WORK, -(long)sizeof(*r));
    free(r);
}

/* Takes r out of c's unanswered records. */
static void unanswered_remove(struct conn *c, struct send_rec *r)
{
    struct send_rec **link = &c->io->unanswered_head, *prev = NULL;
    while (*link && *link != r) {
        prev = *link;
        link = &(*link)->next;
    }
    if (!*link)
        return;
    *link = r->next;
    if (c->io->unanswered_tail == r)
        c->io->unanswered_tail = prev;
}

void send_rec_answered(struct conn *c, struct work *w)
{
    struct send_rec *r = w->rec;
    w->rec = NULL;
    if (!r || r->last != w)
        return;
    r->last = NULL;
    if (!r->retired)
        return; /* its log entry still names it: freed when retired */
    unanswered_remove(c, r);
    send_rec_free(r);
}

static struct logged_wr *log_slot(struct conn *c, int i)
{
    return &c->io->log[(c->io->log_head + i) % c->io->log_cap];
}

/* Logged requests a connection starts with room for: the log doubles while more are in flight
 * at once, up to the send queue's depth (a connection of few requests keeps a small one). */
#define LOG_INITIAL 8

/* Room for one more logged request: the first LOG_INITIAL, or twice as many, oldest first. */
static void log_make_room(struct conn *c)
{
    struct conn_io *io = c->io;
    if (io->log_count < io->log_cap)
        return;
    if (io->log_count >= c->sq_depth)
        armci_die(NULL, "internal error: more requests posted to node %d than its send queue holds",
                  c->node);
    int cap = io->log_cap ? MIN(2 * io->log_cap, c->sq_depth) : MIN(LOG_INITIAL, c->sq_depth);
#if ARMCI_MUTANT_IS(log_full_depth)
    cap = c->sq_depth; /* the bug: every connection's log as deep as its send queue */
#endif
    struct logged_wr *log = xcalloc((size_t)cap, sizeof(*log));
    for (int i = 0; i < io->log_count; i++) {
        const struct logged_wr *from = log_slot(c, i);
        log[i] = *from;
        /* A short inline payload is kept in the entry itself: it moves with it. */
#if !ARMCI_MUTANT_IS(log_grown_inline_stale)
        if (from->sge[0].addr == (uintptr_t)from->data)
            log[i].sge[0].addr = (uintptr_t)log[i].data;
#endif
    }
#if ARMCI_MUTANT_IS(log_grown_inline_stale)
    memset(io->log, 0xa5, sizeof(*io->log) * (size_t)io->log_cap); /* as a reuse would */
#endif
    memstat_add(MEM_SEND_QUEUES, (long)(sizeof(*log) * (size_t)(cap - io->log_cap)));
    free(io->log);
    io->log = log;
    io->log_cap = cap;
    io->log_head = 0;
}

/* The total length of wr's gather list. */
static size_t gathered_bytes(const struct ibv_send_wr *wr)
{
    size_t n = 0;
    for (int i = 0; i < wr->num_sge; i++)
        n += wr->sg_list[i].length;
    return n;
}

/* Copies an inline request's payload: its gather list may name a buffer reused at once. */
static void log_inline(struct logged_wr *e, const struct ibv_send_wr *wr)
{
    size_t len = gathered_bytes(wr);
    char *to = (char *)e->data;
    if (len > LOGGED_INLINE)
        to = e->big_inline = xmalloc(len);
    size_t at = 0;
    for (int i = 0; i < wr->num_sge; i++) {
        memcpy(to + at, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
        at += wr->sg_list[i].length;
    }
    e->wr.num_sge = 1;
    e->sge[0] = (struct ibv_sge){.addr = (uintptr_t)to, .length = (uint32_t)len};
}

static void log_one(struct conn *c, const struct ibv_send_wr *wr)
{
    log_make_room(c);
    struct logged_wr *e = log_slot(c, c->io->log_count++);
    *e = (struct logged_wr){.wr = *wr};
    e->wr.next = NULL;
    if (wr->opcode == IBV_WR_SEND && wr_id_tag(wr->wr_id) == WR_TAG_POINTER)
        e->rec = ((struct work *)wr_id_pointer(wr->wr_id))->rec;
    if (wr->send_flags & IBV_SEND_INLINE) {
        log_inline(e, wr);
        return;
    }
    struct ibv_sge *sge = e->sge;
    if (wr->num_sge > LOGGED_SGE)
        sge = e->more_sge = xmalloc(sizeof(*sge) * (size_t)wr->num_sge);
    memcpy(sge, wr->sg_list, sizeof(*sge) * (size_t)wr->num_sge);
}

void replay_log_append(struct conn *c, const struct ibv_send_wr *first)
{
    for (const struct ibv_send_wr *wr = first; wr; wr = wr->next)
        log_one(c, wr);
}

static void entry_release(struct logged_wr *e)
{
    free(e->more_sge);
    free(e->big_inline);
    e->more_sge = NULL;
    e->big_inline = NULL;
}

void replay_log_retire(struct conn *c, uint32_t n)
{
    for (uint32_t i = 0; i < n && c->io->log_count > 0; i++) {
        struct logged_wr *e = log_slot(c, 0);
        c->io->log_head = (c->io->log_head + 1) % c->io->log_cap;
        c->io->log_count--;
        struct send_rec *r = e->rec;
        entry_release(e);
        if (!r)
            continue;
        r->retired = true;
        if (!r->last) {
            send_rec_free(r); /* answered already */
            continue;
        }
        r->next = NULL;
        FIFO_PUSH(c->io->unanswered_head, c->io->unanswered_tail, r, next);
    }
}

static bool is_atomic(enum ibv_wr_opcode op)
{
    return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

bool replay_log_has_atomic(const struct conn *c)
{
    for (int i = 0; i < c->io->log_count; i++)
        if (is_atomic(c->io->log[(c->io->log_head + i) % c->io->log_cap].wr.opcode))
            return true;
    return false;
}

/* The index of the last logged SEND whose first request the server had served, or -1. */
static int last_served_send(struct conn *c, uint64_t resume)
{
    int last = -1;
    for (int i = 0; i < c->io->log_count; i++) {
        const struct logged_wr *e = log_slot(c, i);
        if (e->rec && e->rec->first_seq < resume)
            last = i;
    }
    return last;
}

int replay_log_post(struct conn *c, uint64_t resume, struct work *marker)
{
#if ARMCI_MUTANT_IS(replay_skipped)
    return 0; /* the bug: what the server had not confirmed is not sent again */
#endif
    int nrec = 0;
    for (struct send_rec *r = c->io->unanswered_head; r; r = r->next)
        nrec++;
    int n = nrec + c->io->log_count;
    if (n == 0)
        return 0;
    struct ibv_send_wr *wrs = xcalloc((size_t)n, sizeof(*wrs));
    struct ibv_sge *rec_sge = xcalloc((size_t)(nrec ? nrec : 1) * RC_QP_MAX_SGE, sizeof(*rec_sge));
    int k = 0;
    /* A SEND the device completed and the server has not answered all of: sent again whole,
     * its payload in place too (the server may never have had it: rule 5). */
    for (struct send_rec *r = c->io->unanswered_head; r; r = r->next, k++) {
        struct ibv_sge *sge = &rec_sge[k * RC_QP_MAX_SGE];
        sge[0] = (struct ibv_sge){
            .addr = (uintptr_t)r->bounce->addr, .length = r->len, .lkey = r->bounce->lkey};
        memcpy(sge + 1, r->in_place, sizeof(*sge) * (size_t)r->n_in_place);
        wrs[k] = (struct ibv_send_wr){.wr_id = (uintptr_t)marker,
                                      .sg_list = sge,
                                      .num_sge = 1 + r->n_in_place,
                                      .opcode = IBV_WR_SEND,
                                      .send_flags = IBV_SEND_SIGNALED};
        marker->events_left++;
    }
    int delivered = last_served_send(c, resume);
    for (int i = 0; i < c->io->log_count; i++, k++) {
        struct logged_wr *e = log_slot(c, i);
        wrs[k] = e->wr;
        wrs[k].sg_list = e->more_sge ? e->more_sge : e->sge;
        if (i < delivered && e->wr.opcode == IBV_WR_RDMA_WRITE) {
            wrs[k].num_sge = 0; /* it reached the server's memory before the SEND it served */
            wrs[k].send_flags &= ~(unsigned)IBV_SEND_INLINE;
        }
    }
#if ARMCI_MUTANT_IS(replay_reordered)
    for (int i = 0; i < n / 2; i++) { /* the bug: replayed newest first */
        struct ibv_send_wr t = wrs[i];
        wrs[i] = wrs[n - 1 - i];
        wrs[n - 1 - i] = t;
    }
#endif
    for (int i = 0; i + 1 < n; i++)
        wrs[i].next = &wrs[i + 1];
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(c->qp, wrs, &bad);
    free(wrs);
    free(rec_sge);
    if (rc)
        armci_die(NULL, "ibv_post_send (replaying %d requests to node %d) failed: %s", n, c->node,
                  strerror(rc));
    return n;
}

void replay_log_forget(struct conn *c)
{
    while (c->io->log_count > 0) {
        struct logged_wr *e = log_slot(c, 0);
        c->io->log_head = (c->io->log_head + 1) % c->io->log_cap;
        c->io->log_count--;
        entry_release(e);
        if (e->rec)
            send_rec_free(e->rec);
    }
    while (c->io->unanswered_head) {
        struct send_rec *r = c->io->unanswered_head;
        FIFO_DROP_HEAD(c->io->unanswered_head, c->io->unanswered_tail, next);
        send_rec_free(r);
    }
    memstat_add(MEM_SEND_QUEUES, -(long)(sizeof(*c->io->log) * (size_t)c->io->log_cap));
    free(c->io->log);
    c->io->log = NULL;
    c->io->log_cap = 0;
    c->io->log_head = 0;
}
