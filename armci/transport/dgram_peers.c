/* The client's per-node state of the hybrid UD path (dgram_peers.h). */
#include "transport/dgram_peers.h"

#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/hybrid_stats.h"
#include "core/intmap.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/util.h"

static struct intmap peers; /* node -> struct dgram_peer */

struct dgram_peer *dgram_peer_of(int node)
{
    struct dgram_peer *p = intmap_get(&peers, (uint32_t)node);
    if (p)
        return p;
    p = xcalloc(1, sizeof(*p));
    memstat_add(MEM_DATAGRAM, (long)sizeof(*p));
    hybrid_stats.nodes++;
    *p = (struct dgram_peer){.node = node, .rto = cfg.hybrid_rto};
    intmap_put(&peers, (uint32_t)node, p);
    return p;
}

struct dgram_peer *dgram_peer_find(int node)
{
    return intmap_get(&peers, (uint32_t)node);
}

void *dgram_payload_copy(const void *local, size_t len)
{
    void *copy = xmalloc(len);
    memstat_add(MEM_DATAGRAM, (long)len);
    return memcpy(copy, local, len);
}

void dgram_payload_free(struct dgram_slot *sl)
{
    if (sl->payload)
        memstat_add(MEM_DATAGRAM, -(long)sl->rq.len);
    free(sl->payload);
    sl->payload = NULL;
}

/* The ring at cap slots, each unanswered one moving to its place. */
static void resize_slots(struct dgram_peer *p, uint32_t cap)
{
    struct dgram_slot *slots = xcalloc(cap, sizeof(*slots));
    for (uint32_t s = p->base; s != p->next_seq; s++)
        slots[s % cap] = *dgram_slot_at(p, s);
    memstat_add(MEM_DATAGRAM, (long)sizeof(*slots) * ((long)cap - (long)p->cap));
    free(p->slots);
    p->slots = slots;
    p->cap = cap;
}

#define FEW_SLOTS 4u

void dgram_slots_grow(struct dgram_peer *p)
{
    uint32_t window = (uint32_t)cfg.hybrid_window;
    resize_slots(p, p->cap ? MIN(2 * p->cap, window) : MIN(FEW_SLOTS, window));
}

void dgram_slots_shrink(struct dgram_peer *p)
{
    if (p->cap > FEW_SLOTS)
        resize_slots(p, FEW_SLOTS);
}

/* A node that keeps losing its promoted connection (our cap, or its server's soft cap asking
 * us to close) pays twice as many operations for the next one: without that, the operation after
 * a demotion promotes it again and the cap's slots turn over (LJ at 64 x 4, cap 8: 4,919
 * closings, 5,138 promotions). */
#define PROMOTE_DOUBLINGS_MAX 10

bool dgram_count_op(int node, long price)
{
    struct dgram_peer *p = dgram_peer_of(node);
    int doublings = MIN(p->promotions, PROMOTE_DOUBLINGS_MAX);
#if ARMCI_MUTANT_IS(promote_price_fixed)
    doublings = 0;
#endif
    return ++p->ops >= price << doublings;
}

void dgram_promoted(int node)
{
    struct dgram_peer *p = dgram_peer_of(node);
    p->ops = 0;
    p->promotions++;
}

void dgram_peers_fini(void)
{
    struct dgram_peer *p;
    INTMAP_FOR_EACH(&peers, p)
    {
        for (uint32_t s = p->base; s != p->next_seq; s++)
            dgram_payload_free(dgram_slot_at(p, s));
        memstat_add(MEM_DATAGRAM, -(long)(sizeof(*p) + sizeof(*p->slots) * p->cap));
        free(p->slots);
        free(p);
    }
    intmap_free(&peers);
}
