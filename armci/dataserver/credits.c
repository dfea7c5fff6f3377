/* The data server's credit policy (credits.h). */
#include "dataserver/credits.h"

#include "core/config.h"
#include "dataserver/resources.h"

static int nconns;
static int allowance_total; /* over all connections: beyond the buffers means over-committed */

void credits_join(struct server_conn *sc)
{
    /* A fair share of the receive buffers, at least one request, at most the cap. */
    int share = ds_res.bufs.count / (nconns + 1);
    sc->allowance = share < 1 ? 1 : share > cfg.server_credits ? cfg.server_credits : share;
    allowance_total += sc->allowance;
    nconns++;
}

void credits_set(struct server_conn *sc, int allowance)
{
    allowance_total += allowance - sc->allowance;
    sc->allowance = allowance;
}

void credits_leave(const struct server_conn *sc)
{
    allowance_total -= sc->allowance;
    nconns--;
}

/*
 * Credits returned with a reply: normally the one the message used. While
 * the server is over-committed (more allowance than buffers) it shrinks
 * clients above their fair share by returning none; when there is room it
 * grows clients below the cap by returning two.
 */
int credits_to_return(struct server_conn *sc)
{
    int nbufs = ds_res.bufs.count;
    int fair = nbufs / (nconns ? nconns : 1);
    if (fair > cfg.server_credits)
        fair = cfg.server_credits;
    if (fair < 1)
        fair = 1;
    if (sc->allowance > fair && allowance_total > nbufs) {
        sc->allowance--;
        allowance_total--;
        return 0;
    }
    if (sc->allowance < fair && allowance_total < nbufs) {
        sc->allowance++;
        allowance_total++;
        return 2;
    }
    return 1;
}

void credits_fini(void)
{
    nconns = 0;
    allowance_total = 0;
}
