/* The data server's credit policy (credits.h). */
#include "dataserver/credits.h"

#include "core/config.h"
#include "core/mutant.h"
#include "dataserver/resources.h"

static int nconns;          /* connections that have sent a request */
static int allowance_total; /* over those: beyond the buffers means over-committed */

void credits_join(struct server_conn *sc)
{
    /* A fair share of the buffers there will be once it sends too (resources_fit_clients),
     * at least one request, at most the cap. */
    int bufs = (nconns + 1) * cfg.server_credits;
    if (bufs > ds_res.bufs.max)
        bufs = ds_res.bufs.max;
    if (bufs < ds_res.bufs.count)
        bufs = ds_res.bufs.count;
    int share = bufs / (nconns + 1);
    sc->allowance = share < 1 ? 1 : share > cfg.server_credits ? cfg.server_credits : share;
}

/* sc counts from now, with its allowance. */
static void count_in(struct server_conn *sc)
{
    sc->requested = true;
    allowance_total += sc->allowance;
    nconns++;
}

void credits_first_request(struct server_conn *sc)
{
    count_in(sc);
#if !ARMCI_MUTANT_IS(server_pool_unfit)
    resources_fit_clients(nconns);
#endif
}

void credits_take_over(struct server_conn *sc, const struct server_conn *old)
{
    sc->allowance = old->allowance;
    if (old->requested)
        count_in(sc); /* its buffers were grown for the old one */
}

void credits_leave(const struct server_conn *sc)
{
    if (!sc->requested)
        return;
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
