/* The request engine's server side: one sequence space per client, kept answers (engine.h). */
#include "dataserver/engine.h"

#include <stdlib.h>

#include "core/config.h"
#include "core/intmap.h"
#include "core/memstat.h"
#include "core/recovery_stats.h"
#include "core/util.h"
#include "wire/protocol.h"

struct kept_answer {
    uint64_t seq;
    int64_t value;
    int32_t status;
    bool used;
};

struct engine_client {
    uint64_t next;            /* its requests below this number were executed */
    struct kept_answer *kept; /* by seq % ring_size(), made at the first answer kept */
    bool sent_datagram;       /* seen over UD */
};

static struct intmap by_client; /* rank -> struct engine_client */

/* The answers a client may still wait for span fewer numbers than this: its requests over RC
 * (its reply buffers) or its datagram window, never both at once (a node's traffic changes
 * carrier only once the other is drained). */
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
        if (e->kept)
            memstat_add(MEM_CONNECTIONS, -(long)(sizeof(*e->kept) * ring_size()));
        memstat_add(MEM_CONNECTIONS, -(long)sizeof(*e));
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

bool engine_first_datagram(struct engine_client *e)
{
    bool first = !e->sent_datagram;
    e->sent_datagram = true;
    return first;
}

void engine_keep(struct engine_client *e, uint64_t seq, int status, int64_t value)
{
    if (!e->kept) {
        e->kept = xcalloc(ring_size(), sizeof(*e->kept));
        memstat_add(MEM_CONNECTIONS, (long)(sizeof(*e->kept) * ring_size()));
    }
    e->kept[seq % ring_size()] =
        (struct kept_answer){.seq = seq, .value = value, .status = status, .used = true};
}

static struct kept_answer *kept_of(const struct engine_client *e, uint64_t seq)
{
    struct kept_answer *k = e->kept ? &e->kept[seq % ring_size()] : NULL;
    return k && k->used && k->seq == seq ? k : NULL;
}

bool engine_kept(const struct engine_client *e, uint64_t seq, int *status, int64_t *value)
{
    const struct kept_answer *k = kept_of(e, seq);
    if (!k)
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
