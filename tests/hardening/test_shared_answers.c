/*
 * The data server's answers (dataserver/answers.c) and credits (credits.c)
 * for SENDs that carry several requests (wire/protocol.h), with the
 * reply SEND recorded instead of posted: the requests of one SEND are
 * answered together and return the one credit the SEND took; a refusal in
 * the middle goes out at once, with the answers before it; and a client
 * gets a reply once half its allowance of SENDs is answered, however many
 * requests they carried.
 */
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/util.h"
#include "dataserver/answers.h"
#include "dataserver/credits.h"
#include "wire/protocol.h"
#include "dataserver/resources.h"
#include "dataserver/sends.h"

#define UNIT_TEST_RUNTIME_HELPERS
#include "unit_test.h"

/* ---- what answers.c and credits.c need from the rest of the server ---- */

struct config cfg;
struct server_resources ds_res;

static struct ds_reply sent[16];
static int nsent;

void resources_fit_clients(int clients)
{
    (void)clients; /* the buffers stay at ds_res.bufs.count */
}

void server_reserve_sends(struct server_conn *sc, int n)
{
    (void)sc;
    (void)n;
}

void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr)
{
    (void)sc;
    if (nsent < 16)
        memcpy(&sent[nsent], (const void *)(uintptr_t)wr->sg_list[0].addr, sizeof(sent[0]));
    nsent++;
}

/* ---- the test ---- */

/* One SEND of k successful updates, tokens first .. first + k - 1. */
static void shared_send(struct server_conn *sc, uint64_t first, int k)
{
    for (int i = 0; i < k - 1; i++)
        server_answer_shared(sc, first + (uint64_t)i, DS_OK);
    server_answer(sc, first + (uint64_t)k - 1, DS_OK, 0, true);
}

int main(void)
{
    cfg.server_credits = 8;
    ds_res.bufs.count = 64;
    struct server_conn sc = {.client = 3};
    credits_join(&sc); /* one client: the cap, 8 */
    EXPECT(sc.allowance == 8, "one client gets ARMCI_SERVER_CREDITS");

    /* Three SENDs of 5 requests: nothing goes out before half the allowance (4 SENDs). */
    shared_send(&sc, 1, 5);
    shared_send(&sc, 6, 5);
    shared_send(&sc, 11, 5);
    EXPECT(nsent == 0, "answers of fewer SENDs than half the allowance wait");
    shared_send(&sc, 16, 5);
    EXPECT(nsent == 1, "the fourth SEND's last answer sends the reply");
    EXPECT(sent[0].answers == 20 && sent[0].token == 20 && sent[0].status == DS_OK,
           "one reply answers the 20 requests, ending with the last");
    EXPECT(sent[0].credits == 4, "4 SENDs return 4 credits, not one per request");

    /* A refusal in the middle of a SEND: at once, with the answers before it, no credit yet. */
    server_answer_shared(&sc, 30, DS_OK);
    server_answer_shared(&sc, 31, DS_EFAULT);
    EXPECT(nsent == 2 && sent[1].token == 31 && sent[1].status == DS_EFAULT &&
               sent[1].answers == 2 && sent[1].credits == 0,
           "a refused request is answered at once, its SEND's credit still to come");
    server_answer(&sc, 32, DS_OK, 0, true);
    EXPECT(nsent == 2, "the rest of that SEND waits");
    server_answers_flush();
    EXPECT(nsent == 3 && sent[2].token == 32 && sent[2].answers == 1 && sent[2].credits == 1,
           "the idle server's flush answers it with the SEND's credit");

    /* A request alone in its SEND is answered as before: at once unless it may wait. */
    server_answer(&sc, 40, DS_OK, 7, false);
    EXPECT(nsent == 4 && sent[3].answers == 1 && sent[3].credits == 1 && sent[3].value == 7,
           "a request that may not wait is answered at once with its credit");
    credits_leave(&sc);
    answers_fini();
    credits_fini();
    printf("PASS\n");
    return 0;
}
