/* Answers and their batching (answers.h). */
#include "dataserver/answers.h"

#include <stdlib.h>

#include "common/grow.h"
#include "core/mutant.h"
#include "core/util.h"
#include "core/wr_id.h"
#include "dataserver/credits.h"
#include "wire/protocol.h"
#include "dataserver/sends.h"

static void send_reply(struct server_conn *sc, const struct ds_reply *r)
{
    if (sc->broken)
        return; /* nobody to answer: the QP is in error */
    struct ibv_sge sge = {.addr = (uintptr_t)r, .length = sizeof(*r), .lkey = 0};
    struct ibv_send_wr wr = {
        .wr_id = wr_id_make((uintptr_t)sc, WR_TAG_POINTER),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
    };
    server_reserve_sends(sc, 1);
    server_post_send(sc, &wr);
}

/* Connections with answers waiting (sc->on_due_list). */
static struct server_conn **due;
static int ndue, capdue;

/*
 * Answers waiting on sc go out when the SENDs they came in number half the
 * client's allowance, so that it gets credits back while the other half of
 * its SENDs are still being served. An idle server sends the rest.
 */
static uint32_t sends_per_reply(const struct server_conn *sc)
{
    return sc->allowance >= 2 ? (uint32_t)sc->allowance / 2 : 1;
}

/* One reply answering every answer due on sc, the last of them `token`, with the credits due. */
static void send_answers(struct server_conn *sc, uint64_t token, int status, int64_t value)
{
    struct ds_reply r = {.token = token,
                         .value = value,
                         .status = status,
                         .credits = sc->credits_due,
                         .answers = sc->answers_due};
    sc->answers_due = 0;
    sc->sends_due = 0;
    sc->credits_due = 0;
    send_reply(sc, &r);
}

static void send_due(struct server_conn *sc)
{
    if (sc->answers_due)
        send_answers(sc, sc->last_due, DS_OK, 0);
}

static void put_on_due_list(struct server_conn *sc)
{
    if (sc->on_due_list)
        return;
    GROW_FOR_ONE(due, ndue, capdue, 16, xrealloc);
    due[ndue++] = sc;
    sc->on_due_list = true;
}

/* One more answer due on sc; `ends_send`: the last request of its SEND, whose credit returns. */
static void answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait,
                   bool ends_send)
{
    if (ends_send) {
        sc->credits_due += credits_to_return(sc);
        sc->sends_due++;
    }
    sc->answers_due++;
    sc->last_due = token;
    if (may_wait && (!ends_send || sc->sends_due < sends_per_reply(sc))) {
        put_on_due_list(sc);
        return;
    }
    send_answers(sc, token, status, value);
}

void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait)
{
    answer(sc, token, status, value, may_wait, true);
}

void server_answer_shared(struct server_conn *sc, uint64_t token, int status)
{
#if ARMCI_MUTANT_IS(shared_send_credit_each)
    answer(sc, token, status, 0, status == DS_OK, true);
#else
    answer(sc, token, status, 0, status == DS_OK, false);
#endif
}

void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued)
{
    struct ds_reply r = {.token = token,
                         .status = status,
                         .credits = queued ? 0 : credits_to_return(sc),
                         .answers = 0};
    send_reply(sc, &r);
}

void server_lock_queued(struct server_conn *sc, uint64_t token)
{
    struct ds_reply r = {
        .token = token, .status = DS_QUEUED, .credits = credits_to_return(sc), .answers = 0};
    send_reply(sc, &r);
}

void answers_forget_conn(const struct server_conn *sc)
{
    if (!sc->on_due_list)
        return;
    for (int i = 0; i < ndue; i++) {
        if (due[i] == sc) {
            due[i] = due[--ndue];
            return;
        }
    }
}

void server_answers_flush(void)
{
    for (int i = 0; i < ndue; i++) {
        due[i]->on_due_list = false;
        send_due(due[i]);
    }
    ndue = 0;
}

void answers_fini(void)
{
    free(due);
    due = NULL;
    ndue = capdue = 0;
}
