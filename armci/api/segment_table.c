/*
 * The segment table (slot -> struct segment) and the lookup that translates
 * (process, address) into where the bytes are, through each segment's block
 * index (block_index.h): seg_resolve, on every remote operation, and
 * seg_block. segment.c's collective allocation fills the table
 * (segment_table_insert) and empties it.
 */
#include "api/segment_table.h"

#include <stdlib.h>

#include "core/error.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/runtime.h"
#include "core/threads.h"
#include "core/topology.h"

/*
 * Each thread remembers the last blocks it resolved, so that the usual
 * lookup (the same few blocks again and again) takes no lock: an entry is
 * good while the table has not changed since (index_generation, bumped by
 * every ARMCI_Malloc and ARMCI_Free under the runtime lock). Using a block
 * while another thread frees it is the caller's bug in any case.
 */
#define RESOLVE_CACHE 4
struct resolved {
    uint64_t generation; /* 0: empty */
    int proc;
    int node; /* of proc */
    uintptr_t start;
    uintptr_t end;
    uint64_t server_addr; /* of start */
    uint32_t rkey;
};
static __thread struct resolved resolve_cache[RESOLVE_CACHE]
    __attribute__((tls_model("initial-exec")));
static __thread unsigned resolve_next __attribute__((tls_model("initial-exec")));
/*
 * Where the thread last found a block, before a miss scans every segment: by (process,
 * page of the address), hashed (a slot + 1; 0: none: each node object is a mapping of its
 * own, so two arrays never share a page), then the last find of all (the next is most often
 * in the same array). Hints only: the block found is checked as in the scan.
 */
#define SLOT_HINTS 256
static __thread uint32_t slot_hint[SLOT_HINTS] __attribute__((tls_model("initial-exec")));
static __thread uint32_t last_slot __attribute__((tls_model("initial-exec")));
static uint64_t index_generation = 1;

static struct segment **seg_table; /* [seg_slots]; NULL: free slot */
static uint32_t seg_slots;
static long table_bytes;

/* The segment table grew or shrank by delta bytes. */
static void table_account(long delta)
{
    table_bytes += delta;
    memstat_add(MEM_SEGMENTS, delta);
}

long seg_table_bytes(void)
{
    return table_bytes;
}

long seg_index_bytes(void)
{
    return block_index_bytes();
}

/* The table changes (runtime lock held): every thread's remembered lookups expire. */
static void index_changed(void)
{
    __atomic_store_n(&index_generation, index_generation + 1, __ATOMIC_RELEASE);
}

/* Where block b of s starts here: through my mapping if its process is on my node (local),
 * else as its owner sees it (what ptr_arr gave; the same when the mapping is symmetric). */
static inline uintptr_t block_start(const struct segment *s, const struct block *b, bool local)
{
    return local ? (uintptr_t)s->map + b->offset : b->start;
}

/* proc's block of s (in *b) if it holds addr (node: proc's). */
static inline bool block_holding(const struct segment *s, int proc, int node, uintptr_t addr,
                                 struct block *b)
{
    if (!block_index_of(&s->index, proc, node, b))
        return false;
    uintptr_t start = block_start(s, b, node == topo.my_node);
    return addr - start < b->bytes && addr >= start;
}

static inline unsigned hint_of(int proc, uintptr_t addr)
{
    uint64_t key = ((uint64_t)(uint32_t)proc << 40) ^ (uint64_t)(addr >> 12);
    return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 56); /* SLOT_HINTS = 2^8 */
}

/* proc's block holding addr in the segment of slot, if it is live. */
static bool block_in_slot(uint32_t slot, int proc, int node, uintptr_t addr, struct block *b)
{
    if (slot >= seg_slots || !seg_table[slot])
        return false;
#if ARMCI_MUTANT_IS(index_hint_trusted) /* the bug: the hinted segment, unchecked */
    return block_index_of(&seg_table[slot]->index, proc, node, b);
#else
    return block_holding(seg_table[slot], proc, node, addr, b);
#endif
}

/*
 * The block of proc (on node) holding addr (in *b), in any segment (runtime lock held); *slot_out
 * is its segment's slot. The hints first, then a scan of the live segments: the records are per
 * segment and shared by the node, so nothing per process orders them by address.
 */
static bool index_find(int proc, int node, uintptr_t addr, struct block *b, uint32_t *slot_out)
{
    unsigned h = hint_of(proc, addr);
    uint32_t tried[2] = {slot_hint[h] - 1, last_slot};
    bool found = false;
    for (int i = 0; i < 2 && !found; i++)
        if ((found = block_in_slot(tried[i], proc, node, addr, b)))
            *slot_out = tried[i];
    for (uint32_t i = 0; i < seg_slots && !found; i++) {
        if (i == tried[0] || i == tried[1] || !seg_table[i])
            continue;
        if ((found = block_holding(seg_table[i], proc, node, addr, b)))
            *slot_out = i;
    }
    if (found) {
        slot_hint[h] = *slot_out + 1;
        last_slot = *slot_out;
    }
    return found;
}

/* The index of `node` (which has members) in the segment's per-node arrays. */
static int node_slot(const struct segment *s, int node)
{
    if (!s->node_ids)
        return node;
    int lo = 0, hi = s->nnodes - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->node_ids[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Where block b (of node slot k) is in its node's data server. */
static uint64_t server_addr_of(const struct segment *s, int k, const struct block *b)
{
    if (s->server_bases)
        return s->server_bases[k] + b->offset;
#if ARMCI_MUTANT_IS(server_offset_ignored) /* the bug: the member's address, not the server's */
    return b->start;
#else
    return b->start + s->server_offset; /* symmetric: b->start is the agreed base + offset */
#endif
}

size_t seg_node_bytes(const struct segment *s)
{
    size_t each = sizeof(*s->rkeys) + (s->node_ids ? sizeof(*s->node_ids) : 0) +
                  (s->server_bases ? sizeof(*s->server_bases) : 0);
    return each * (size_t)s->nnodes;
}

void seg_resolve(const char *call, const char *arg, int proc, const void *addr, size_t len,
                 struct target *out)
{
    uintptr_t a = (uintptr_t)addr;
    uint64_t generation = __atomic_load_n(&index_generation, __ATOMIC_ACQUIRE);
    const struct resolved *hit = NULL;
    for (int i = 0; i < RESOLVE_CACHE && !hit; i++) {
        const struct resolved *c = &resolve_cache[i];
        if (c->generation == generation && c->proc == proc && a >= c->start && a < c->end)
            hit = c;
    }
    if (!hit) {
        rt_lock(); /* another thread may be allocating or freeing */
        int node = topo_node_of(proc);
        bool local = node == topo.my_node;
        uint32_t slot = 0;
        struct block b;
        if (index_find(proc, node, a, &b, &slot)) {
            const struct segment *s = seg_table[slot];
            int k = node_slot(s, node);
            uintptr_t start = block_start(s, &b, local);
            struct resolved *c = &resolve_cache[resolve_next++ % RESOLVE_CACHE];
            *c = (struct resolved){
                .generation = index_generation,
                .proc = proc,
                .node = node,
                .start = start,
                .end = start + b.bytes,
                .server_addr = server_addr_of(s, k, &b),
                .rkey = s->rkeys[k],
            };
            hit = c;
        }
        rt_unlock();
    }
    if (!hit)
        armci_die(call, "argument %s=%p is not inside ARMCI-allocated memory of process %d", arg,
                  addr, proc);
    if (len > hit->end - a)
        armci_die(call,
                  "argument %s=%p: the %zu bytes from it run past the end of process %d's "
                  "ARMCI block (%zu bytes left)",
                  arg, addr, len, proc, (size_t)(hit->end - a));

    size_t offset = a - hit->start;
    out->proc = proc;
    out->node = hit->node;
    out->local = out->node == topo.my_node ? (void *)a : NULL;
    /* Same-node too: device atomics reach them over a loopback connection (verbs/atomics.h). */
    out->server_addr = hit->server_addr + offset;
    out->rkey = hit->rkey;
}

struct segment *segment_table_by_id(uint64_t id)
{
    for (uint32_t i = 0; i < seg_slots; i++)
        if (seg_table[i] && seg_table[i]->id == id)
            return seg_table[i];
    return NULL;
}

bool seg_block(uint64_t id, int proc, void **start, size_t *bytes)
{
    rt_lock();
    const struct segment *s = segment_table_by_id(id);
    struct block b;
    int node = topo_node_of(proc);
    bool found = s && block_index_of(&s->index, proc, node, &b);
    if (found) {
        *start = (void *)block_start(s, &b, node == topo.my_node);
        *bytes = (size_t)b.bytes;
    }
    rt_unlock();
    return found;
}

void segment_table_insert(struct segment *s)
{
    uint32_t slot = 0;
    while (slot < seg_slots && seg_table[slot])
        slot++;
    if (slot == seg_slots) {
        uint32_t grown = seg_slots ? 2 * seg_slots : 16;
        seg_table = xrealloc(seg_table, sizeof(*seg_table) * grown);
        for (uint32_t i = seg_slots; i < grown; i++)
            seg_table[i] = NULL;
        table_account((long)(sizeof(*seg_table) * (grown - seg_slots)));
        seg_slots = grown;
    }
    s->slot = slot;
    seg_table[slot] = s;
    table_account((long)(sizeof(*s) + seg_node_bytes(s)));
    index_changed();
}

void segment_table_remove(struct segment *s)
{
    seg_table[s->slot] = NULL;
    table_account(-(long)(sizeof(*s) + seg_node_bytes(s)));
    index_changed();
}

struct segment *segment_table_by_my_block(MPI_Comm comm, const void *ptr)
{
    for (uint32_t i = 0; i < seg_slots; i++) {
        struct segment *c = seg_table[i];
        if (c && c->comm == comm && c->my_bytes && c->my_view == (uintptr_t)ptr)
            return c;
    }
    return NULL;
}

const struct segment *seg_of(const void *my_block)
{
    const struct segment *s = NULL;
    rt_lock();
    for (uint32_t i = 0; i < seg_slots && !s; i++)
        if (seg_table[i] && seg_table[i]->my_bytes && seg_table[i]->my_view == (uintptr_t)my_block)
            s = seg_table[i];
    rt_unlock();
    return s;
}

const struct block_index *seg_index_of(const void *my_block)
{
    const struct segment *s = seg_of(my_block);
    return s ? &s->index : NULL;
}

struct segment *segment_table_any(void)
{
    for (uint32_t i = 0; i < seg_slots; i++)
        if (seg_table[i])
            return seg_table[i];
    return NULL;
}

void segment_table_account(long delta)
{
    table_account(delta);
}

void segment_table_fini(void)
{
    free(seg_table);
    table_account(-(long)(sizeof(*seg_table) * seg_slots));
    seg_table = NULL;
    seg_slots = 0;
}
