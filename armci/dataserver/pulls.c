/* Pulls in flight and the messages that wait behind them (pulls.h). */
#include "dataserver/pulls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fifo.h"
#include "core/memstat.h"
#include "core/util.h"
#include "core/wr_id.h"
#include "dataserver/engine.h"
#include "dataserver/resources.h"
#include "dataserver/sends.h"

/* A message received while its connection's pull was in flight. */
struct parked {
    struct parked *next;
    size_t len;
    void *msg;
};

static int in_flight;
static struct pull *done_head, *done_tail;
static struct server_conn *resumed_head, *resumed_tail; /* whose messages may go on */

static void on_pulled(void *ctx, const struct ibv_wc *wc)
{
    (void)ctx;
    struct pull *p = wr_id_pointer(wc->wr_id);
    p->status = wc->status;
    FIFO_PUSH(done_head, done_tail, p, next_done);
    server_send_completed(p->sc, wc);
}

void pulls_init(void)
{
    endpoint_on(&ds_res.sends, WR_TAG_PULL, on_pulled, NULL);
}

int pull_start(struct server_conn *sc, const struct ds_message *rq, const struct ibv_sge *into,
               int n, struct pool_buffer *out, size_t payload)
{
    if (sc->broken)
        return EPIPE;
    struct pull *p = xcalloc(1, sizeof(*p));
    memstat_add(MEM_WORK, (long)sizeof(*p));
    *p = (struct pull){.sc = sc, .rq = *rq, .out = out, .payload = payload, .status = -1};
    struct ibv_send_wr wr = {
        .wr_id = wr_id_make((uintptr_t)p, WR_TAG_PULL),
        .sg_list = (struct ibv_sge *)into,
        .num_sge = n,
        .opcode = IBV_WR_RDMA_READ,
        .send_flags = IBV_SEND_SIGNALED,
        .wr = {.rdma = {.remote_addr = rq->reply_addr, .rkey = rq->reply_rkey}},
    };
    server_reserve_sends(sc, 2); /* the read and the answer */
    server_post_send(sc, &wr);
    if (sc->broken) { /* the post was refused */
        pull_free(p);
        return EPIPE;
    }
    sc->pull = p;
    in_flight++;
    return 0;
}

int pulls_in_flight(void)
{
    return in_flight;
}

struct pull *pull_next_done(void)
{
    struct pull *p = done_head;
    if (!p)
        return NULL;
    FIFO_DROP_HEAD(done_head, done_tail, next_done);
    p->sc->pull = NULL;
    in_flight--;
    return p;
}

void pull_free(struct pull *p)
{
    memstat_add(MEM_WORK, -(long)sizeof(*p));
    free(p);
}

void pull_resume(struct server_conn *sc)
{
    if (!sc->parked || sc->resume_due)
        return;
    FIFO_PUSH(resumed_head, resumed_tail, sc, resume_next);
    sc->resume_due = true;
}

struct server_conn *pull_next_resumed(void)
{
    struct server_conn *sc = resumed_head;
    if (!sc)
        return NULL;
    FIFO_DROP_HEAD(resumed_head, resumed_tail, resume_next);
    sc->resume_due = false;
    return sc;
}

bool pull_holds(const struct server_conn *sc)
{
    return sc->pull || sc->parked;
}

void pull_park(struct server_conn *sc, const void *msg, size_t len)
{
    struct parked *k = xmalloc(sizeof(*k));
    *k = (struct parked){.len = len, .msg = xmalloc(len ? len : 1)};
    memcpy(k->msg, msg, len);
    memstat_add(MEM_WORK, (long)(sizeof(*k) + len));
    FIFO_PUSH(sc->parked, sc->parked_tail, k, next);
}

bool pull_unpark(struct server_conn *sc, void **msg, size_t *len)
{
    struct parked *k = sc->parked;
    if (!k)
        return false;
    FIFO_DROP_HEAD(sc->parked, sc->parked_tail, next);
    *msg = k->msg;
    *len = k->len;
    memstat_add(MEM_WORK, -(long)(sizeof(*k) + k->len));
    free(k);
    return true;
}

void pulls_forget_conn(struct server_conn *sc)
{
    void *msg;
    size_t len;
    while (pull_unpark(sc, &msg, &len))
        free(msg);
    struct server_conn **at = &resumed_head, *before = NULL;
    while (sc->resume_due && *at != sc) {
        before = *at;
        at = &before->resume_next;
    }
    if (sc->resume_due) { /* on the resume FIFO: unlinked */
        *at = sc->resume_next;
        if (resumed_tail == sc)
            resumed_tail = before;
        sc->resume_due = false;
    }
    if (!sc->pull)
        return;
    /* Its read completed (retiring waits for sc's work): it is on the done list. */
    for (struct pull **link = &done_head, *prev = NULL; *link;
         prev = *link, link = &(*link)->next_done) {
        struct pull *p = *link;
        if (p->sc != sc)
            continue;
        *link = p->next_done;
        if (done_tail == p)
            done_tail = prev;
        if (p->out)
            server_out_buf_put(p->out);
        pull_free(p);
        in_flight--;
        engine_count_unserved();
        break;
    }
    sc->pull = NULL;
}
