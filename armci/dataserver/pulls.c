/* Pulls in flight and the messages that wait behind them (pulls.h). */
#include "dataserver/pulls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
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
static struct server_conn **resumed; /* FIFO of connections whose messages may go on */
static int nresumed, capresumed;

static void on_pulled(void *ctx, const struct ibv_wc *wc)
{
    (void)ctx;
    struct pull *p = wr_id_pointer(wc->wr_id);
    p->status = wc->status;
    if (done_tail)
        done_tail->next_done = p;
    else
        done_head = p;
    done_tail = p;
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
    done_head = p->next_done;
    if (!done_head)
        done_tail = NULL;
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
    GROW_FOR_ONE(resumed, nresumed, capresumed, 16, xrealloc);
    resumed[nresumed++] = sc;
    sc->resume_due = true;
}

struct server_conn *pull_next_resumed(void)
{
    if (nresumed == 0)
        return NULL;
    struct server_conn *sc = resumed[0];
    memmove(resumed, resumed + 1, sizeof(*resumed) * (size_t)--nresumed);
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
    if (sc->parked_tail)
        sc->parked_tail->next = k;
    else
        sc->parked = k;
    sc->parked_tail = k;
}

bool pull_unpark(struct server_conn *sc, void **msg, size_t *len)
{
    struct parked *k = sc->parked;
    if (!k)
        return false;
    sc->parked = k->next;
    if (!sc->parked)
        sc->parked_tail = NULL;
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
    for (int i = 0; i < nresumed; i++)
        if (resumed[i] == sc) {
            memmove(resumed + i, resumed + i + 1, sizeof(*resumed) * (size_t)(nresumed - i - 1));
            nresumed--;
            break;
        }
    sc->resume_due = false;
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
