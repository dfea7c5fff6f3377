/*
 * The segment table (slot -> struct segment) and the block index that
 * translates (process, address) into where the bytes are: seg_resolve, on
 * every remote operation, and seg_block. segment.c's collective allocation
 * fills them (segment_table_insert) and empties them.
 */
#include "api/segment_table.h"

#include <stdlib.h>

#include "core/error.h"
#include "core/memstat.h"
#include "core/runtime.h"
#include "core/threads.h"
#include "core/topology.h"

static struct block *blocks;
static uint32_t *first; /* [nprocs + 1]; NULL while there are no blocks */
static size_t nblocks;

/*
 * Each thread remembers the last blocks it resolved, so that the usual
 * lookup (the same few blocks again and again) takes no lock: an entry is
 * good while the index has not changed since (index_generation, bumped by
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
static uint64_t index_generation = 1;

static struct segment **seg_table; /* [seg_slots]; NULL: free slot */
static uint32_t seg_slots;
static long table_bytes, index_bytes;

/* The segment table grew or shrank by delta bytes. */
static void table_account(long delta)
{
    table_bytes += delta;
    memstat_add(MEM_SEGMENTS, delta);
}

static void index_account(void)
{
    long now =
        (long)(nblocks * sizeof(*blocks)) + (first ? (long)sizeof(*first) * (rt.nprocs + 1) : 0);
    memstat_add(MEM_INDEX, now - index_bytes);
    index_bytes = now;
}

long seg_table_bytes(void)
{
    return table_bytes;
}

long seg_index_bytes(void)
{
    return index_bytes;
}

/* The index changes (runtime lock held): every thread's remembered lookups expire. */
static void index_changed(void)
{
    __atomic_store_n(&index_generation, index_generation + 1, __ATOMIC_RELEASE);
    index_account();
}

/* Merges a segment's blocks (at most one per process, sorted by process) into the index. */
static void index_add(const struct new_block *add, int nadd)
{
    int n = rt.nprocs;
    uint32_t *nfirst = xmalloc(sizeof(*nfirst) * (size_t)(n + 1));
    struct block *nb = xmalloc(sizeof(*nb) * (nblocks + (size_t)nadd));
    uint32_t out = 0;
    int j = 0;
    for (int p = 0; p < n; p++) {
        nfirst[p] = out;
        uint32_t lo = first ? first[p] : 0, hi = first ? first[p + 1] : 0;
        bool pending = j < nadd && add[j].proc == p;
        for (uint32_t i = lo; i < hi; i++) {
            if (pending && add[j].b.start < blocks[i].start) {
                nb[out++] = add[j++].b;
                pending = false;
            }
            nb[out++] = blocks[i];
        }
        if (pending)
            nb[out++] = add[j++].b;
    }
    nfirst[n] = out;
    free(blocks);
    free(first);
    blocks = nb;
    first = nfirst;
    nblocks = out;
    index_changed();
}

/* Drops the blocks of the segment in slot. */
static void index_remove(uint32_t slot)
{
    if (!first)
        return;
    uint32_t out = 0;
    for (int p = 0; p < rt.nprocs; p++) {
        uint32_t lo = first[p], hi = first[p + 1];
        first[p] = out;
        for (uint32_t i = lo; i < hi; i++)
            if (blocks[i].seg != slot)
                blocks[out++] = blocks[i];
    }
    first[rt.nprocs] = out;
    nblocks = out;
    if (nblocks) {
        blocks = xrealloc(blocks, sizeof(*blocks) * nblocks);
    } else {
        free(blocks);
        free(first);
        blocks = NULL;
        first = NULL;
    }
    index_changed();
}

static const struct block *index_find(int proc, uintptr_t addr)
{
    if (!first)
        return NULL;
    uint32_t lo = first[proc], hi = first[proc + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct block *b = &blocks[mid];
        if (addr < b->start)
            hi = mid;
        else if (addr - b->start >= b->bytes)
            lo = mid + 1;
        else
            return b;
    }
    return NULL;
}

/* Where the segment's object of `node` is (the node has members). */
static const struct seg_node *seg_node_of(const struct segment *s, int node)
{
    if (s->nnodes == topo.num_nodes)
        return &s->nodes[node];
    int lo = 0, hi = s->nnodes - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->nodes[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return &s->nodes[lo];
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
        const struct block *b = index_find(proc, a);
        if (b) {
            int node = topo_node_of(proc);
            const struct seg_node *sn = seg_node_of(seg_table[b->seg], node);
            struct resolved *c = &resolve_cache[resolve_next++ % RESOLVE_CACHE];
            *c = (struct resolved){
                .generation = index_generation,
                .proc = proc,
                .node = node,
                .start = b->start,
                .end = b->start + b->bytes,
                .server_addr = sn->server_base + (uint64_t)b->place * BLOCK_ALIGN,
                .rkey = sn->rkey,
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
    bool found = false;
    rt_lock();
    const struct segment *s = segment_table_by_id(id);
    for (uint32_t i = first ? first[proc] : 0; s && first && i < first[proc + 1]; i++) {
        if (blocks[i].seg != s->slot)
            continue;
        *start = (void *)blocks[i].start;
        *bytes = (size_t)blocks[i].bytes;
        found = true;
        break;
    }
    rt_unlock();
    return found;
}

void segment_table_insert(struct segment *s, struct new_block *add, int nadd)
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
    table_account((long)(sizeof(*s) + sizeof(*s->nodes) * (size_t)s->nnodes));
    for (int i = 0; i < nadd; i++)
        add[i].b.seg = s->slot;
    if (nadd)
        index_add(add, nadd);
}

void segment_table_remove(struct segment *s)
{
    index_remove(s->slot);
    seg_table[s->slot] = NULL;
    table_account(-(long)(sizeof(*s) + sizeof(*s->nodes) * (size_t)s->nnodes));
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
    free(blocks);
    free(first);
    blocks = NULL;
    first = NULL;
    nblocks = 0;
    index_account();
}
