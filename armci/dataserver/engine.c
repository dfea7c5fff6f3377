/* The request engine's server side: one sequence space per client, kept answers (engine.h). */
#include "dataserver/engine.h"

#include <stdlib.h>

#include "core/config.h"
#include "core/intmap.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/recovery_stats.h"
#include "core/util.h"
#include "wire/protocol.h"

struct kept_answer {
    uint64_t seq;
    int64_t value;
    int32_t status;
    bool used;
    bool by_datagram; /* kept for a datagram: the client's ack tells when it is no longer needed */
};

struct engine_client {
    uint64_t next;            /* its requests below this number were executed */
    uint64_t acked;           /* it has the answers of its datagrams below this number */
    struct kept_answer *kept; /* by seq % kept_cap, made at the first answer kept */
    uint32_t kept_cap;        /* grows with the answers the client may still ask for again */
    bool sent_datagram;       /* seen over UD */
};

static struct intmap by_client; /* rank -> struct engine_client */

#define FEW_KEPT 4u

/* The answers a client may still wait for span fewer numbers than this: its requests over RC
 * (its reply buffers) or its datagram window, never both at once (a node's traffic changes
 * carrier only once the other is drained). The most the ring of kept answers grows to. */
static size_t ring_size(void)
{
    size_t window = cfg.hybrid_window > 0 ? (size_t)cfg.hybrid_window : 0;
    return window > DS_MAX_UNANSWERED ? window : DS_MAX_UNANSWERED;
}

struct engine_client *engine_of(int client)
{
    struct engine_client *e = intmap_get(&by_client, (uint32_t)client);
    if (e)
        return e;
    e = xcalloc(1, sizeof(*e));
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*e));
    intmap_put(&by_client, (uint32_t)client, e);
    return e;
}

void engine_fini(void)
{
    struct engine_client *e;
    INTMAP_FOR_EACH(&by_client, e)
    {
        memstat_add(MEM_CONNECTIONS, -(long)(sizeof(*e->kept) * e->kept_cap + sizeof(*e)));
        free(e->kept);
        free(e);
    }
    intmap_free(&by_client);
}

enum engine_verdict engine_check(const struct engine_client *e, uint64_t seq)
{
    if (seq == e->next)
        return ENGINE_NEW;
    return seq < e->next ? ENGINE_DUPLICATE : ENGINE_EARLY;
}

void engine_served(struct engine_client *e, uint64_t seq)
{
    if (seq >= e->next)
        e->next = seq + 1;
}

uint64_t engine_next(const struct engine_client *e)
{
    return e->next;
}

bool engine_widen(const struct engine_client *e, uint32_t seq, uint64_t *full)
{
    /* Within 2^31 of the next number either way: a window is far smaller. */
    int32_t ahead = (int32_t)(seq - (uint32_t)e->next);
    if (ahead < 0 && (uint64_t)(-(int64_t)ahead) > e->next)
        return false;
    *full = e->next + (uint64_t)(int64_t)ahead;
    return true;
}

void engine_acked(struct engine_client *e, uint32_t ack)
{
    uint64_t full;
    if (!engine_widen(e, ack, &full))
        return;
    /* Never past what was executed: a client cannot have answers the server never gave. */
    if (full > e->next)
        full = e->next;
    if (full > e->acked)
        e->acked = full;
}

bool engine_first_datagram(struct engine_client *e)
{
    bool first = !e->sent_datagram;
    e->sent_datagram = true;
    return first;
}

/*
 * Whether the client may still send request k->seq again when its next number is `next`:
 * over RC while it is among the last ring_size() numbers (the replay never reaches further);
 * as a datagram while it is in the client's window and not yet acked.
 */
static bool still_asked(const struct engine_client *e, const struct kept_answer *k, uint64_t next)
{
    if (!k->used)
        return false;
    if (k->by_datagram)
        return k->seq >= e->acked && next - k->seq <= (uint64_t)cfg.hybrid_window;
    return next - k->seq <= ring_size();
}

/* Doubles the ring (up to ring_size()), moving the answers still asked for: two of them never
 * share a slot (they did not before, and a larger ring separates them further). */
static void grow_kept(struct engine_client *e, uint64_t next)
{
    uint32_t cap = e->kept_cap ? 2 * e->kept_cap : FEW_KEPT;
    if (cap > ring_size())
        cap = (uint32_t)ring_size();
    struct kept_answer *kept = xcalloc(cap, sizeof(*kept));
    for (uint32_t i = 0; i < e->kept_cap; i++) {
        const struct kept_answer *k = &e->kept[i];
#if !ARMCI_MUTANT_IS(kept_grown_unmoved)
        if (still_asked(e, k, next))
            kept[k->seq % cap] = *k;
#endif
    }
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*kept) * ((long)cap - (long)e->kept_cap));
    free(e->kept);
    e->kept = kept;
    e->kept_cap = cap;
}

void engine_keep(struct engine_client *e, uint64_t seq, int status, int64_t value, bool by_datagram)
{
    /* Grown while the slot holds an answer still asked for: by the clients that keep many
     * requests in flight, not by every client ever heard (a ring of 256 is 8 KiB). */
#if ARMCI_MUTANT_IS(kept_ring_fixed)
    size_t most = FEW_KEPT; /* the bug: the ring never grows, answers still asked for are lost */
#else
    size_t most = ring_size();
#endif
    while (!e->kept || (e->kept_cap < most && still_asked(e, &e->kept[seq % e->kept_cap], seq + 1)))
        grow_kept(e, seq + 1);
    e->kept[seq % e->kept_cap] = (struct kept_answer){
        .seq = seq, .value = value, .status = status, .used = true, .by_datagram = by_datagram};
}

bool engine_kept(const struct engine_client *e, uint64_t seq, int *status, int64_t *value)
{
    const struct kept_answer *k = e->kept ? &e->kept[seq % e->kept_cap] : NULL;
    /* One no longer asked for is gone, even while its slot still holds it. */
    if (!k || k->seq != seq || !still_asked(e, k, e->next))
        return false;
    *status = k->status;
    *value = k->value;
    return true;
}

void engine_count_duplicate(void)
{
    recovery_stats.server_replays++;
}

void engine_count_unserved(void)
{
    recovery_stats.unserved++;
}
