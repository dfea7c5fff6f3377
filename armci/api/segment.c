#include "api/segment.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memstat.h"
#include "verbs/memory.h"
#include "core/runtime.h"
#include "core/threads.h"
#include "dataserver/link.h"
#include "core/shm.h"
#include "api/sync.h"
#include "core/topology.h"
#include "core/util.h"

/* Blocks start on cache lines: fine for every ARMCI type and avoids false sharing. */
#define BLOCK_ALIGN CACHE_LINE

/*
 * The block index: one record per block of every segment (members that
 * asked for 0 bytes have none), grouped by process and sorted by start
 * within a process: blocks[first[p] .. first[p + 1]) are p's, and a lookup
 * is a binary search among them. Everything per node (server base, rkey)
 * is in the segment the record names. ARMCI_Malloc and ARMCI_Free rebuild
 * the arrays (they are collective and O(processes) anyway), so they hold
 * exactly what is in use.
 */
struct block {
    uintptr_t start; /* as ptr_arr gives it here */
    uint64_t bytes;
    uint32_t seg;   /* slot in seg_table */
    uint32_t place; /* offset in its node's object, in BLOCK_ALIGN units */
};

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

/* A registered ARMCI_Malloc_local region. */
struct local_region {
    void *addr;
    size_t len;
    struct net_mr *mr;
    struct local_region *next;
};

static struct segment **seg_table; /* [seg_slots]; NULL: free slot */
static uint32_t seg_slots;
static struct local_region *local_regions;
static uint32_t next_seg_serial;
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

static void destroy_segment(struct segment *s);

void seg_fini(void)
{
    for (uint32_t i = 0; i < seg_slots; i++)
        if (seg_table[i])
            destroy_segment(seg_table[i]);
    free(seg_table);
    table_account(-(long)(sizeof(*seg_table) * seg_slots));
    seg_table = NULL;
    seg_slots = 0;
    while (local_regions) {
        struct local_region *r = local_regions;
        local_regions = r->next;
        if (r->mr)
            net_dereg(r->mr);
        free(r->addr);
        free(r);
        table_account(-(long)sizeof(*r));
    }
    free(blocks);
    free(first);
    blocks = NULL;
    first = NULL;
    nblocks = 0;
    index_account();
}

/* The index changes (runtime lock held): every thread's remembered lookups expire. */
static void index_changed(void)
{
    __atomic_store_n(&index_generation, index_generation + 1, __ATOMIC_RELEASE);
    index_account();
}

/* A block to add, and whose it is. */
struct new_block {
    int proc;
    struct block b;
};

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
    if (out->node == topo.my_node) {
        out->local = (void *)a;
        out->server_addr = 0;
        out->rkey = 0;
    } else {
        out->local = NULL;
        out->server_addr = hit->server_addr + offset;
        out->rkey = hit->rkey;
    }
}

static struct segment *segment_by_id(uint64_t id)
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
    const struct segment *s = segment_by_id(id);
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

/* Puts s in a free slot of the segment table (runtime lock held). */
static void table_insert(struct segment *s)
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
}

/* What each member tells the others first: who it is and what it asks for. */
struct member_info {
    int32_t rank;
    uint32_t pad;
    uint64_t bytes;
};

/* Then, once its node's object exists: where its block is. */
struct block_info {
    uint64_t own_addr;    /* the block in the member's own address space */
    uint64_t server_base; /* its node's object in that node's data server */
    uint32_t rkey;
    uint32_t pad;
};

/* Registration of a node object with the data server of this node. */
struct server_reg {
    uint64_t seg_id;
    uint64_t server_base;
    uint32_t rkey;
    bool lock_block;
};

/* Runs on the creator of the node object while its name still exists. */
static void register_with_server(void *ctx, const char *name, size_t size)
{
    struct server_reg *reg = ctx;
    server_link_map_segment(reg->seg_id, name, size, reg->lock_block, &reg->server_base,
                            &reg->rkey);
}

/* Runtime lock held. */
static void destroy_segment(struct segment *s)
{
    index_remove(s->slot);
    seg_table[s->slot] = NULL;
    if (s->local_mr)
        net_dereg(s->local_mr);
    if (s->server_mapped_here)
        server_link_unmap_segment(s->id);
    shm_unmap(s->map, s->map_size);
    table_account(-(long)(sizeof(*s) + sizeof(*s->nodes) * (size_t)s->nnodes));
    free(s->nodes);
    free(s);
}

static int by_proc(const void *a, const void *b)
{
    const struct new_block *x = a, *y = b;
    return (x->proc > y->proc) - (x->proc < y->proc);
}

/*
 * Each node's members share one object, their blocks in group-rank order:
 * place[g] is member g's offset in its node's object; returns the nodes
 * with members (flags in has_node[num_nodes]).
 */
static int lay_out(const char *call, const struct member_info *m, int n, uint64_t *place,
                   bool *has_node)
{
    uint64_t *fill = xcalloc((size_t)topo.num_nodes, sizeof(*fill));
    int nnodes = 0;
    for (int g = 0; g < n; g++) {
        int node = topo_node_of(m[g].rank);
        nnodes += !has_node[node];
        has_node[node] = true;
        place[g] = fill[node];
        fill[node] += align_up((size_t)m[g].bytes, BLOCK_ALIGN);
        /* The index keeps places in 32 bits of BLOCK_ALIGN units. */
        if (fill[node] / BLOCK_ALIGN > UINT32_MAX)
            armci_die(call, "the blocks of node %d add up to more than %llu GiB", node,
                      (unsigned long long)((uint64_t)BLOCK_ALIGN << 32 >> 30));
    }
    free(fill);
    return nnodes;
}

static int malloc_kind(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                       bool lock_block, uint64_t *id_out)
{
    rt_require_init(call);
    check_ptr(call, "ptr_arr", ptr_arr);
    check_nonneg(call, "bytes", bytes);

    MPI_Comm comm = group ? group->comm : rt.comm;
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);

    struct segment *s = xcalloc(1, sizeof(*s));
    s->comm = comm;
    s->nmembers = n;
    s->my_member = me;
    s->my_bytes = (size_t)bytes;
    struct member_info mine_m = {.rank = rt.me, .bytes = (uint64_t)bytes};
    struct member_info *m = xmalloc(sizeof(*m) * (size_t)n);
    MPI_Allgather(&mine_m, sizeof(mine_m), MPI_BYTE, m, sizeof(mine_m), MPI_BYTE, comm);

    s->id = ((uint64_t)rt.me << 32) | next_seg_serial++;
    MPI_Bcast(&s->id, 1, MPI_UINT64_T, 0, comm);

    uint64_t *place = xmalloc(sizeof(*place) * (size_t)n);
    bool *has_node = xcalloc((size_t)topo.num_nodes, sizeof(*has_node));
    s->nnodes = lay_out(call, m, n, place, has_node);
    for (int g = 0; g < n; g++)
        if (topo_node_of(m[g].rank) == topo.my_node)
            s->map_size += align_up((size_t)m[g].bytes, BLOCK_ALIGN);

    MPI_Comm node_group;
    MPI_Comm_split(comm, topo.my_node, me, &node_group);
    char tag[64];
    snprintf(tag, sizeof(tag), "s%016llx-n%d", (unsigned long long)s->id, topo.my_node);
    struct server_reg reg = {.seg_id = s->id, .lock_block = lock_block};
    bool with_server = net_active() && s->map_size > 0;
    int node_rank;
    MPI_Comm_rank(node_group, &node_rank);
    s->server_mapped_here = with_server && node_rank == 0;
    s->map = shm_map_collective(node_group, tag, s->map_size,
                                with_server ? register_with_server : NULL, &reg);
    if (with_server)
        MPI_Bcast(&reg, sizeof(reg), MPI_BYTE, 0, node_group);
    MPI_Comm_free(&node_group);

    rt_lock();
    if (with_server)
        s->local_mr = net_reg_user(call, s->map, s->map_size);
    rt_unlock();

    struct block_info mine = {
        .own_addr = (uintptr_t)s->map + place[me],
        .server_base = reg.server_base,
        .rkey = reg.rkey,
    };
    struct block_info *info = xmalloc(sizeof(*info) * (size_t)n);
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, info, sizeof(mine), MPI_BYTE, comm);

    /* Per node: its object in its data server (every member of a node says the same). */
    s->nodes = xmalloc(sizeof(*s->nodes) * (size_t)s->nnodes);
    int *node_at = xmalloc(sizeof(int) * (size_t)topo.num_nodes);
    for (int node = 0, k = 0; node < topo.num_nodes; node++) {
        node_at[node] = has_node[node] ? k : -1;
        if (has_node[node])
            s->nodes[k++] = (struct seg_node){.node = node};
    }
    /* Same-node blocks are addressed through my mapping, the others as their owners see them. */
    struct new_block *add = xmalloc(sizeof(*add) * (size_t)n);
    int nadd = 0;
    for (int g = 0; g < n; g++) {
        int node = topo_node_of(m[g].rank);
        s->nodes[node_at[node]].server_base = info[g].server_base;
        s->nodes[node_at[node]].rkey = info[g].rkey;
        uintptr_t view = node == topo.my_node ? (uintptr_t)s->map + place[g] : info[g].own_addr;
        ptr_arr[g] = m[g].bytes ? (void *)view : NULL;
        if (!m[g].bytes)
            continue;
        add[nadd++] = (struct new_block){
            .proc = m[g].rank,
            .b = {view, m[g].bytes, 0, (uint32_t)(place[g] / BLOCK_ALIGN)},
        };
    }
    s->my_view = (uintptr_t)ptr_arr[me];
    qsort(add, (size_t)nadd, sizeof(*add), by_proc);
    free(node_at);
    free(has_node);
    free(info);
    free(place);
    free(m);

    rt_lock();
    table_insert(s);
    for (int i = 0; i < nadd; i++)
        add[i].b.seg = s->slot;
    if (nadd)
        index_add(add, nadd);
    rt_unlock();
    free(add);
    if (id_out)
        *id_out = s->id;
    return 0;
}

int seg_malloc(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group)
{
    return malloc_kind(call, ptr_arr, bytes, group, false, NULL);
}

int seg_malloc_locks(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                     uint64_t *id)
{
    return malloc_kind(call, ptr_arr, bytes, group, true, id);
}

int seg_free(const char *call, void *ptr, ARMCI_Group *group)
{
    rt_require_init(call);
    MPI_Comm comm = group ? group->comm : rt.comm;

    /* Members that asked for 0 bytes pass NULL: the others name the segment. */
    long long id = -1;
    struct segment *s = NULL;
    rt_lock();
    if (ptr) {
        for (uint32_t i = 0; i < seg_slots && !s; i++) {
            struct segment *c = seg_table[i];
            if (c && c->comm == comm && c->my_bytes && c->my_view == (uintptr_t)ptr)
                s = c;
        }
        if (!s)
            armci_die(call,
                      "argument ptr=%p is not the start of a block ARMCI_Malloc returned "
                      "here for this group",
                      ptr);
        id = (long long)s->id;
    }
    rt_unlock();
    /* Every member that names a segment must name the same one (ARMCI_Free is collective). */
    long long range[2] = {id, id < 0 ? -LLONG_MAX : -id}; /* max of id, max of -id = -min */
    MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_LONG_LONG, MPI_MAX, comm);
    id = range[0];
    if (id < 0)
        return 0; /* every member asked for 0 bytes: nothing was allocated */
    if (-range[1] != id)
        armci_die(call,
                  "the processes are freeing different segments (this one passed ptr=%p): "
                  "ARMCI_Free must name the same ARMCI_Malloc on every process",
                  ptr);

    rt_lock();
    s = segment_by_id((uint64_t)id);
    rt_unlock();
    if (!s)
        armci_die(call, "no ARMCI segment matches the one the other members are freeing");
    if (!ptr && s->my_bytes)
        armci_die(call,
                  "argument ptr is NULL, but this process's block of the segment being "
                  "freed is %zu bytes: pass the pointer ARMCI_Malloc returned",
                  s->my_bytes);

    /* Nobody may still be reading or writing the memory when it goes away. */
    sync_all_fence();
    MPI_Barrier(comm);
    rt_lock();
    destroy_segment(s);
    rt_unlock();
    return 0;
}

void *seg_malloc_local(const char *call, armci_size_t bytes)
{
    rt_require_init(call);
    check_nonneg(call, "bytes", bytes);
    struct local_region *r = xcalloc(1, sizeof(*r));
    r->len = (size_t)bytes;
    r->addr = xmalloc_registrable(align_up(r->len ? r->len : 1, 4096));
    rt_lock();
    if (net_active())
        r->mr = net_reg_user(call, r->addr, r->len ? r->len : 1);
    r->next = local_regions;
    local_regions = r;
    table_account((long)sizeof(*r));
    rt_unlock();
    return r->addr;
}

int seg_free_local(const char *call, void *ptr)
{
    rt_require_init(call);
    rt_lock();
    for (struct local_region **link = &local_regions; *link; link = &(*link)->next) {
        struct local_region *r = *link;
        if (r->addr != ptr)
            continue;
        *link = r->next;
        if (r->mr)
            net_dereg(r->mr);
        table_account(-(long)sizeof(*r));
        rt_unlock();
        free(r->addr);
        free(r);
        return 0;
    }
    rt_unlock();
    armci_die(call, "argument ptr=%p was not returned by ARMCI_Malloc_local", ptr);
}
