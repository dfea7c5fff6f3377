/*
 * ARMCI_Malloc and ARMCI_Free (collective: the members' requests exchanged,
 * one shared-memory object per node, registered with its data server) and
 * ARMCI_Malloc_local. Where the blocks are is kept by segment_table.c.
 */
#include "api/segment.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/segment_table.h"
#include "api/sync.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/runtime.h"
#include "core/shm.h"
#include "core/threads.h"
#include "core/topology.h"
#include "core/util.h"
#include "dataserver/link.h"
#include "verbs/memory.h"

/* A registered ARMCI_Malloc_local region. */
struct local_region {
    void *addr;
    size_t len;
    struct net_mr *mr;
    struct local_region *next;
};

static struct local_region *local_regions;
static uint32_t next_seg_serial;

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
    uint64_t wanted; /* where the server should map it (symmetric base + L), 0: anywhere */
    uint64_t server_base;
    uint32_t rkey;
    bool lock_block;
};

/* Runs on the creator of the node object while its name still exists. */
static void register_with_server(void *ctx, const char *name, size_t size)
{
    struct server_reg *reg = ctx;
    server_link_map_segment(reg->seg_id, name, size, reg->lock_block, reg->wanted,
                            &reg->server_base, &reg->rkey);
}

/* Runtime lock held. */
static void destroy_segment(struct segment *s)
{
    segment_table_remove(s);
    block_index_release(&s->index);
    if (s->local_mr)
        net_dereg(s->local_mr);
    if (s->server_mapped_here)
        server_link_unmap_segment(s->id);
#if !ARMCI_MUTANT_IS(free_keeps_mapping) /* the bug: a freed block's object stays mapped */
    shm_unmap(s->map, s->map_size);
#endif
    free(s->server_bases ? (void *)s->server_bases : (void *)s->rkeys); /* one allocation */
    free(s);
}

/* Candidates for a symmetric mapping before the members give up and map where they can. */
#define SYMMETRIC_TRIES 4
/* What the test hook holds at a candidate (FAULT_SYMMETRIC_TAKEN). */
#define TEST_HOLD 4096

/* A member's block and its start in its owner's address space, while they are sorted. */
struct block_start {
    int32_t proc;
    uint32_t place; /* in BLOCK_ALIGN units */
    uint64_t bytes;
    uint64_t start;
};

static int by_proc(const void *a, const void *b)
{
    const struct block_start *x = a, *y = b;
    return (x->proc > y->proc) - (x->proc < y->proc);
}

/* Whether b extends run r, whose last process is `last` (symmetric mappings only: otherwise a
 * run is one block, its start beside it). Sets r->stepped at the run's second block. */
static bool extends_run(struct block_run *r, int32_t last, const struct block_start *b)
{
#if ARMCI_MUTANT_IS(runs_never_merged) /* the bug: a run a block, as the records were */
    return false;
#endif
    if (r->bytes == 0 || b->proc != last + 1 || b->bytes != r->bytes)
        return false;
    uint64_t after = (uint64_t)(b->proc - r->proc);
    uint64_t step = align_up((size_t)b->bytes, BLOCK_ALIGN) / BLOCK_ALIGN;
    if (after == 1 && b->place == r->place + step)
        r->stepped = 1; /* the next block on the same node */
    else if (after == 1 && b->place == r->place)
        r->stepped = 0; /* at the same place on the next node */
    return b->place == r->place + (r->stepped ? after * step : 0);
}

/*
 * The segment's runs by process (the node's writer of the index only): the blocks of the
 * `count` members that asked for some, a gap between processes that follow one another without
 * (a run of 0 bytes); when the mapping is symmetric (base), processes that follow one another
 * with equal blocks placed alike share a run. In *starts, without it, each block's start in its
 * owner's address space beside its run. Returns the runs' number.
 */
static uint32_t runs_of(const struct member_info *m, const struct block_info *info,
                        const uint64_t *place, int n, uint32_t count, uintptr_t base,
                        struct block_run **runs_out, uint64_t **starts)
{
    size_t room = count ? 2 * (size_t)count : 1; /* a run and a gap a block at most */
    struct block_start *bs = xmalloc(sizeof(*bs) * room);
    uint32_t blocks = 0;
    for (int g = 0; g < n; g++)
        if (m[g].bytes)
            bs[blocks++] = (struct block_start){.proc = m[g].rank,
                                                .place = (uint32_t)(place[g] / BLOCK_ALIGN),
                                                .bytes = m[g].bytes,
                                                .start = info[g].own_addr};
    qsort(bs, blocks, sizeof(*bs), by_proc);
    struct block_run *runs = xmalloc(sizeof(*runs) * room);
    *starts = xmalloc(sizeof(**starts) * room);
    uint32_t out = 0;
    for (uint32_t i = 0; i < blocks; i++) {
        int32_t last = i ? bs[i - 1].proc : 0;
        if (i && base && extends_run(&runs[out - 1], last, &bs[i]))
            continue;
        if (i && bs[i].proc != last + 1) { /* processes without a block between */
            runs[out] = (struct block_run){.bytes = 0, .proc = last + 1};
            (*starts)[out++] = 0;
        }
        runs[out] =
            (struct block_run){.bytes = bs[i].bytes, .proc = bs[i].proc, .place = bs[i].place};
        (*starts)[out++] = bs[i].start;
    }
    free(bs);
    *runs_out = runs;
    return out;
}

/*
 * Each node's members share one object, their blocks in group-rank order:
 * place[g] is member g's offset in its node's object; returns the nodes
 * with members (flags in has_node[num_nodes]) and in *largest the size of
 * the largest node's object.
 */
static int lay_out(const char *call, const struct member_info *m, int n, uint64_t *place,
                   bool *has_node, size_t *largest)
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
    *largest = 0;
    for (int node = 0; node < topo.num_nodes; node++)
        *largest = fill[node] > *largest ? (size_t)fill[node] : *largest;
    free(fill);
    return nnodes;
}

/*
 * Every process of the world, in rank order, asked the same bytes (> 0), and lay_out put each
 * block after those of its node's lower ranks: the places follow from the ranks
 * (block_index_regular_offset), and the index needs no run.
 */
static bool is_regular(const struct member_info *m, int n, const uint64_t *place)
{
    if (n != rt.nprocs || m[0].bytes == 0)
        return false;
    uint64_t stride = align_up((size_t)m[0].bytes, BLOCK_ALIGN);
    for (int g = 0; g < n; g++)
        if (m[g].rank != g || m[g].bytes != m[0].bytes ||
            place[g] != (uint64_t)topo_local_index(g) * stride)
            return false;
    return true;
}

/* L: how far above the members' mapping of a node object its data server is asked to map it
 * (the largest node object, whole pages: mappings start on a page). */
static size_t server_offset_of(size_t largest)
{
    return align_up(largest, (size_t)sysconf(_SC_PAGESIZE));
}

/* What a member reserves to vote for attempt i's candidate: room for two copies of the largest
 * node object (the members' at the candidate, the data server's L above), then 1, 8 and 64 GiB
 * more, so that later candidates lie below the holes between mappings. */
static size_t vote_size(size_t largest, int attempt)
{
    return 2 * server_offset_of(largest) + (attempt ? (size_t)1 << (27 + 3 * attempt) : 0);
}

/*
 * Attempt i's candidate (collective over comm): the lowest of the members' vacant addresses;
 * 0 if a member found none. The kernel maps downwards from a base it randomizes per process,
 * so an address below another process's vacant one most likely lies below all its mappings:
 * one member's candidate (rank 0's, say) would fall among some other's mappings at scale.
 */
static uintptr_t agree_candidate(MPI_Comm comm, size_t largest, int attempt)
{
    uint64_t mine = shm_vacant_address(vote_size(largest, attempt)), lowest = 0;
    MPI_Allreduce(&mine, &lowest, 1, MPI_UINT64_T, MPI_MIN, comm);
    return (uintptr_t)lowest;
}

/* Test hook: the group's last member finds the candidate taken (true: it holds a page there). */
static bool hold_for_test(uintptr_t at, int attempt, bool last)
{
    bool taken = fault_injected(FAULT_SYMMETRIC_TAKEN) ||
                 (fault_injected(FAULT_SYMMETRIC_FIRST_TAKEN) && attempt == 0);
    return last && taken && shm_occupy((void *)at, TEST_HOLD);
}

/*
 * Maps obj (NULL: my node has no object) at one address in every member of comm (collective):
 * that address and in *map my mapping (NULL without an object); 0 when no candidate fitted
 * every member, with nothing mapped. Every member takes the same branch: the candidates and
 * the verdicts are reduced over comm.
 */
static uintptr_t map_symmetric(MPI_Comm comm, const struct shm_object *obj, size_t largest,
                               bool last, void **map)
{
    *map = NULL;
    for (int attempt = 0; attempt < SYMMETRIC_TRIES; attempt++) {
        uintptr_t at = agree_candidate(comm, largest, attempt);
        if (!at)
            continue;
        bool held = hold_for_test(at, attempt, last);
        void *mine = obj ? shm_map_at(obj, (void *)at) : NULL;
        if (held)
            shm_unmap((void *)at, TEST_HOLD);
        int fits = !obj || mine;
        MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm);
        if (fits) {
            *map = mine;
            return at;
        }
        if (mine)
            shm_unmap(mine, obj->size);
    }
    return 0;
}

/*
 * Creates my node's object of s->map_size bytes (0: none) and maps it in s->map (collective
 * over comm; node_group: its members on my node), at one address in every member if the
 * members agree on one: returns that address (symmetric), else 0. With reg, the object's
 * creator then has the node's data server map it, L above that address if symmetric.
 */
static uintptr_t map_node_object(MPI_Comm comm, MPI_Comm node_group, const char *tag,
                                 struct segment *s, size_t largest, struct server_reg *reg)
{
    struct shm_object obj;
    bool have = s->map_size > 0;
    if (have)
        shm_create(node_group, tag, s->map_size, &obj);
    bool last = s->my_member == s->nmembers - 1;
    uintptr_t base = largest ? map_symmetric(comm, have ? &obj : NULL, largest, last, &s->map) : 0;
    if (have && !base)
        s->map = shm_map_at(&obj, NULL);
    if (reg)
        reg->wanted = base ? base + server_offset_of(largest) : 0;
    if (have)
        shm_publish(node_group, &obj, reg ? register_with_server : NULL, reg);
    return base;
}

/*
 * Whether every node's data server mapped its object L above base (only members with a block
 * say: a node whose members asked nothing has no object). Without verbs no server address is
 * ever used: nothing to keep either.
 */
static bool server_symmetric(uintptr_t base, size_t largest, const struct member_info *m,
                             const struct block_info *info, int n)
{
    if (!net_active())
        return true;
    if (!base)
        return false;
    for (int g = 0; g < n; g++)
        if (m[g].bytes && info[g].server_base != base + server_offset_of(largest))
            return false;
    return true;
}

/*
 * The segment's per-node arrays, in one allocation (server bases first, for their alignment):
 * an rkey a node, its id unless every node has members, its data server's base unless the
 * segment is server-symmetric (then server_offset).
 */
static void alloc_node_arrays(struct segment *s, bool symmetric, size_t largest)
{
    size_t n = (size_t)s->nnodes;
    bool ids = s->nnodes < topo.num_nodes, bases = !symmetric;
    char *p =
        xmalloc(n * (sizeof(uint32_t) + (ids ? sizeof(int) : 0) + (bases ? sizeof(uint64_t) : 0)));
    s->server_bases = bases ? (uint64_t *)p : NULL;
    p += bases ? n * sizeof(uint64_t) : 0;
    s->rkeys = (uint32_t *)p;
    s->node_ids = ids ? (int *)(p + n * sizeof(uint32_t)) : NULL;
    s->server_offset = symmetric ? server_offset_of(largest) : 0;
}

/* Fills the per-node arrays from the members' block_info (every member of a node says the
 * same); node_at[node]: the node's index there, -1 without members. */
static void fill_node_arrays(struct segment *s, const int *node_at, const struct member_info *m,
                             const struct block_info *info, int n)
{
    for (int node = 0; node < topo.num_nodes; node++)
        if (s->node_ids && node_at[node] >= 0)
            s->node_ids[node_at[node]] = node;
    for (int g = 0; g < n; g++) {
        int k = node_at[topo_node_of(m[g].rank)];
        s->rkeys[k] = info[g].rkey;
        if (s->server_bases)
            s->server_bases[k] = info[g].server_base;
    }
}

/*
 * The segment's block index (collective over node_group): nothing for a regular array mapped
 * symmetrically (base), else the runs of its `count` blocks, written once per node.
 */
static void publish_index(struct segment *s, MPI_Comm node_group, uintptr_t base,
                          const struct member_info *m, const struct block_info *info,
                          const uint64_t *place, uint32_t count)
{
    int n = s->nmembers, node_rank;
    if (base && is_regular(m, n, place)) {
        block_index_regular(&s->index, base, m[0].bytes);
        return;
    }
    MPI_Comm_rank(node_group, &node_rank);
    uint64_t *starts = NULL;
    struct block_run *runs = NULL;
    uint32_t nruns = 0;
    if (node_rank == 0)
        nruns = runs_of(m, info, place, n, count, base, &runs, &starts);
    MPI_Bcast(&nruns, 1, MPI_UINT32_T, 0, node_group);
    int32_t end = 0; /* one past the last process with a block */
    for (int g = 0; g < n; g++)
        end = m[g].bytes && m[g].rank + 1 > end ? m[g].rank + 1 : end;
    char tag[64];
    snprintf(tag, sizeof(tag), "x%016llx-n%d", (unsigned long long)s->id, topo.my_node);
    block_index_publish(&s->index, node_group, tag, base, runs, starts, nruns, end);
    free(runs);
    free(starts);
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
    size_t largest;
    s->nnodes = lay_out(call, m, n, place, has_node, &largest);
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
    uintptr_t base = map_node_object(comm, node_group, tag, s, largest, with_server ? &reg : NULL);
    if (with_server)
        MPI_Bcast(&reg, sizeof(reg), MPI_BYTE, 0, node_group);

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

    /* Per node: its object in its data server. */
    int *node_at = xmalloc(sizeof(int) * (size_t)topo.num_nodes);
    for (int node = 0, k = 0; node < topo.num_nodes; node++)
        node_at[node] = has_node[node] ? k++ : -1;
    alloc_node_arrays(s, server_symmetric(base, largest, m, info, n), largest);
    fill_node_arrays(s, node_at, m, info, n);
    /* Symmetric: every block at base plus its place, in every member. Else same-node blocks
     * are addressed through my mapping, the others as their owners see them. */
    uint32_t count = 0;
    for (int g = 0; g < n; g++) {
        int node = topo_node_of(m[g].rank);
        uintptr_t view = base                   ? base + place[g]
                         : node == topo.my_node ? (uintptr_t)s->map + place[g]
                                                : info[g].own_addr;
        ptr_arr[g] = m[g].bytes ? (void *)view : NULL;
        count += m[g].bytes != 0;
    }
    s->my_view = (uintptr_t)ptr_arr[me];
    publish_index(s, node_group, base, m, info, place, count);
    MPI_Comm_free(&node_group);
    free(node_at);
    free(has_node);
    free(info);
    free(place);
    free(m);

    rt_lock();
    segment_table_insert(s);
    rt_unlock();
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
        s = segment_table_by_my_block(comm, ptr);
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
    s = segment_table_by_id((uint64_t)id);
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
    segment_table_account((long)sizeof(*r));
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
        segment_table_account(-(long)sizeof(*r));
        rt_unlock();
        free(r->addr);
        free(r);
        return 0;
    }
    rt_unlock();
    armci_die(call, "argument ptr=%p was not returned by ARMCI_Malloc_local", ptr);
}

void seg_fini(void)
{
    struct segment *s;
    while ((s = segment_table_any()))
        destroy_segment(s);
    while (local_regions) {
        struct local_region *r = local_regions;
        local_regions = r->next;
        if (r->mr)
            net_dereg(r->mr);
        free(r->addr);
        free(r);
        segment_table_account(-(long)sizeof(*r));
    }
    segment_table_fini();
}
