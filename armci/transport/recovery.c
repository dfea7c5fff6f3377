/* Recovery of broken connections (recovery.h). */
#include "transport/recovery.h"

#include <stdlib.h>

#include "core/config.h"
#include "core/error.h"
#include "core/memstat.h"
#include "core/recovery_stats.h"
#include "core/topology.h"
#include "core/util.h"
#include "odcm/cm.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/replay_log.h"
#include "transport/requests.h"
#include "transport/work.h"

/* Breaks of one connection in a row, with no operation completed between them, before the
 * job gives up on it. A replay of a full send queue under softib's SOFTIB_RC_BREAK=0.005 breaks
 * again about a third of the time: 32 in a row is never seen by chance, and a request that
 * breaks the connection each time is usually named sooner by the device's access error. */
#define RECOVERY_MAX_IN_A_ROW 32

bool recovery_mends(enum ibv_wc_status status)
{
    return status == IBV_WC_RETRY_EXC_ERR || status == IBV_WC_LOC_QP_OP_ERR ||
           status == IBV_WC_WR_FLUSH_ERR;
}

static void (*check_events)(void);

void recovery_init(void (*check_async_events)(void))
{
    check_events = check_async_events;
}

bool recovery_start(struct conn *c, const char *why, const char *what)
{
    if (!replay_log_on())
        return false;
    if (c->io->recovering)
        return true; /* the rest of the broken QP's requests, flushed */
    /* A QP flushed by an access error (its server wrote where it may not, for a request of
     * ours) is a bug to name, not a path to mend: the device said which first. */
    if (check_events)
        check_events();
    if (c->io->recovering)
        return true; /* an event of the same QP started it meanwhile */
    char node[160];
    topo_describe_node(c->node, node, sizeof(node));
    /* A device atomic may have been executed at the target before the QP broke: sending it
     * again could apply it twice, not sending it could lose it. */
    if (replay_log_has_atomic(c))
        armci_die(NULL,
                  "the connection to %s broke (%s, after %s) with a device atomic (ARMCI_Rmw, "
                  "ARMCI_RMW=device) in flight, which may or may not have been executed: it "
                  "cannot be sent again. With ARMCI_RMW=server (the default with "
                  "ARMCI_RECOVERY_TIMEOUT on) a break costs no Rmw",
                  node, why, what);
    /* A request that breaks the connection each time it is sent (one the server cannot
     * answer, e.g. naming a reply buffer it may not write) is not sent for ever. */
    if (++c->io->breaks_in_a_row > RECOVERY_MAX_IN_A_ROW)
        armci_die(NULL,
                  "the connection to the data server of node %d failed again each of the %d "
                  "times it was set up anew, before any request completed (%s, after %s): a "
                  "request of this process breaks it (e.g. one naming a reply buffer the "
                  "server may not write)",
                  c->node, RECOVERY_MAX_IN_A_ROW, why, what);
    c->io->recovering = true;
    c->io->broke_at = now_seconds();
    c->io->broke_why = why;
    recovery_stats.breaks++;
    armci_warn("connection to %s broke: %s (after %s); connecting anew (at most "
               "ARMCI_RECOVERY_TIMEOUT=%g s)",
               node, why, what, cfg.recovery_timeout);
    cm_conn_reconnect(c, REPLY_BUFS);
    return true;
}

static struct work *marker_of(struct conn *c)
{
    if (!c->io->replay_marker) {
        struct work *m = xcalloc(1, sizeof(*m));
        memstat_add(MEM_WORK, (long)sizeof(*m));
        *m = (struct work){.kind = WORK_REPLAY_MARKER, .conn = c, .what = "a replayed request"};
        c->io->replay_marker = m;
    }
    return c->io->replay_marker;
}

void recovery_replay(struct conn *c)
{
    c->io->recovering = false;
    int n = replay_log_post(c, c->server_terms.resume, marker_of(c));
    c->io->has_replayed |= n > 0;
    double took = now_seconds() - c->io->broke_at;
    recovery_stats.recovered++;
    recovery_stats.replayed += n;
    if (took > recovery_stats.slowest)
        recovery_stats.slowest = took;
    char node[160];
    topo_describe_node(c->node, node, sizeof(node));
    armci_warn("connection to %s broke: %s; recovered in %.2f s, %d requests replayed", node,
               c->io->broke_why, took, n);
}

void recovery_marker_done(struct conn *c, const struct ibv_wc *wc)
{
    c->io->replay_marker->events_left--;
    if (wc->status != IBV_WC_SUCCESS &&
        !recovery_start(c, ibv_wc_status_str(wc->status), "a replayed data-server request"))
        armci_die(NULL, "a replayed data-server request to node %d failed: %s", c->node,
                  ibv_wc_status_str(wc->status));
}

void recovery_forget(struct conn *c)
{
    if (!c->io->replay_marker)
        return;
    memstat_add(MEM_WORK, -(long)sizeof(*c->io->replay_marker));
    free(c->io->replay_marker);
    c->io->replay_marker = NULL;
}
