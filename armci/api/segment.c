#include "api/segment.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
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

/* One block of one segment, as seen from here; kept sorted per process. */
struct block_range {
    uintptr_t start;
    uintptr_t end;
    struct segment *seg;
    int member;
};

struct block_index {
    struct block_range *v;
    int n;
    int cap;
};

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
    struct block_range r;
    uint64_t server_addr;
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

static struct segment *segments;
static struct block_index *index_of; /* [nprocs] */
static struct local_region *local_regions;
static uint32_t next_seg_serial;

void seg_init(void)
{
    index_of = xcalloc(rt.nprocs, sizeof(*index_of));
}

static void destroy_segment(struct segment *s);

void seg_fini(void)
{
    while (segments) {
        struct segment *s = segments;
        segments = s->next;
        destroy_segment(s);
    }
    while (local_regions) {
        struct local_region *r = local_regions;
        local_regions = r->next;
        if (r->mr)
            net_dereg(r->mr);
        free(r->addr);
        free(r);
    }
    if (index_of) {
        for (int p = 0; p < rt.nprocs; p++)
            free(index_of[p].v);
        free(index_of);
        index_of = NULL;
    }
}

/* The index changes (runtime lock held): every thread's remembered lookups expire. */
static void index_changed(void)
{
    __atomic_store_n(&index_generation, index_generation + 1, __ATOMIC_RELEASE);
}

static void index_insert(int proc, struct block_range r)
{
    struct block_index *ix = &index_of[proc];
    index_changed();
    if (ix->n == ix->cap) {
        ix->cap = ix->cap ? 2 * ix->cap : 8;
        ix->v = xrealloc(ix->v, sizeof(*ix->v) * ix->cap);
    }
    int pos = ix->n;
    while (pos > 0 && ix->v[pos - 1].start > r.start) {
        ix->v[pos] = ix->v[pos - 1];
        pos--;
    }
    ix->v[pos] = r;
    ix->n++;
}

static void index_remove(int proc, const struct segment *s)
{
    struct block_index *ix = &index_of[proc];
    int out = 0;
    for (int i = 0; i < ix->n; i++)
        if (ix->v[i].seg != s)
            ix->v[out++] = ix->v[i];
    ix->n = out;
    index_changed();
}

static const struct block_range *index_find(int proc, uintptr_t addr)
{
    struct block_index *ix = &index_of[proc];
    int lo = 0, hi = ix->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const struct block_range *r = &ix->v[mid];
        if (addr < r->start) {
            hi = mid - 1;
        } else if (addr >= r->end) {
            lo = mid + 1;
        } else {
            return r;
        }
    }
    return NULL;
}

void seg_resolve(const char *call, const char *arg, int proc, const void *addr, size_t len,
                 struct target *out)
{
    uintptr_t a = (uintptr_t)addr;
    uint64_t generation = __atomic_load_n(&index_generation, __ATOMIC_ACQUIRE);
    const struct resolved *hit = NULL;
    for (int i = 0; i < RESOLVE_CACHE && !hit; i++) {
        const struct resolved *c = &resolve_cache[i];
        if (c->generation == generation && c->proc == proc && a >= c->r.start && a < c->r.end)
            hit = c;
    }
    if (!hit) {
        rt_lock(); /* another thread may be allocating or freeing */
        const struct block_range *found = index_find(proc, a);
        if (found) {
            struct resolved *c = &resolve_cache[resolve_next++ % RESOLVE_CACHE];
            *c = (struct resolved){
                .generation = index_generation,
                .proc = proc,
                .r = *found,
                .server_addr = found->seg->server_addr[found->member],
                .rkey = found->seg->rkey[found->member],
            };
            hit = c;
        }
        rt_unlock();
    }
    const struct block_range *r = hit ? &hit->r : NULL;
    if (!r)
        armci_die(call, "argument %s=%p is not inside ARMCI-allocated memory of process %d", arg,
                  addr, proc);
    if (len > r->end - a)
        armci_die(call,
                  "argument %s=%p: the %zu bytes from it run past the end of process %d's "
                  "ARMCI block (%zu bytes left)",
                  arg, addr, len, proc, (size_t)(r->end - a));

    size_t offset = a - r->start;
    out->proc = proc;
    out->node = topo_node_of(proc);
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

/* What each member tells the others about its block. */
struct block_info {
    uint64_t own_addr;    /* the block in the member's own address space */
    uint64_t server_addr; /* the block in its node's data server */
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

static void destroy_segment(struct segment *s)
{
    for (int g = 0; g < s->nmembers; g++)
        index_remove(s->members[g], s);
    if (s->local_mr)
        net_dereg(s->local_mr);
    if (s->server_mapped_here)
        server_link_unmap_segment(s->id);
    shm_unmap(s->map, s->map_size);
    free(s->members);
    free(s->bytes);
    free(s->view);
    free(s->server_addr);
    free(s->rkey);
    free(s);
}

static int malloc_kind(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                       bool lock_block)
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
    s->members = xmalloc(sizeof(int) * n);
    s->bytes = xmalloc(sizeof(size_t) * n);
    s->view = xmalloc(sizeof(uintptr_t) * n);
    s->server_addr = xcalloc(n, sizeof(uint64_t));
    s->rkey = xcalloc(n, sizeof(uint32_t));
    MPI_Allgather(&rt.me, 1, MPI_INT, s->members, 1, MPI_INT, comm);
    uint64_t my_bytes = (uint64_t)bytes;
    uint64_t *all_bytes = xmalloc(sizeof(uint64_t) * n);
    MPI_Allgather(&my_bytes, 1, MPI_UINT64_T, all_bytes, 1, MPI_UINT64_T, comm);
    for (int g = 0; g < n; g++)
        s->bytes[g] = (size_t)all_bytes[g];
    free(all_bytes);

    s->id = ((uint64_t)rt.me << 32) | next_seg_serial++;
    MPI_Bcast(&s->id, 1, MPI_UINT64_T, 0, comm);

    /* My node's members share one object; blocks in group-rank order. */
    size_t my_offset = 0;
    for (int g = 0; g < n; g++) {
        if (topo_node_of(s->members[g]) != topo.my_node)
            continue;
        if (g == me)
            my_offset = s->map_size;
        s->map_size += align_up(s->bytes[g], BLOCK_ALIGN);
    }

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
        .own_addr = (uintptr_t)s->map + my_offset,
        .server_addr = reg.server_base + my_offset,
        .rkey = reg.rkey,
    };
    struct block_info *info = xmalloc(sizeof(*info) * n);
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, info, sizeof(mine), MPI_BYTE, comm);

    /* Same-node blocks are addressed through my mapping: offsets follow the layout above. */
    rt_lock();
    size_t offset = 0;
    for (int g = 0; g < n; g++) {
        bool same_node = topo_node_of(s->members[g]) == topo.my_node;
        if (same_node) {
            s->view[g] = (uintptr_t)s->map + offset;
            offset += align_up(s->bytes[g], BLOCK_ALIGN);
        } else {
            s->view[g] = (uintptr_t)info[g].own_addr;
        }
        s->server_addr[g] = info[g].server_addr;
        s->rkey[g] = info[g].rkey;
        ptr_arr[g] = s->bytes[g] ? (void *)s->view[g] : NULL;
        if (s->bytes[g]) {
            struct block_range r = {s->view[g], s->view[g] + s->bytes[g], s, g};
            index_insert(s->members[g], r);
        }
    }
    free(info);

    s->next = segments;
    segments = s;
    rt_unlock();
    return 0;
}

int seg_malloc(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group)
{
    return malloc_kind(call, ptr_arr, bytes, group, false);
}

int seg_malloc_locks(const char *call, void **ptr_arr, armci_size_t bytes, ARMCI_Group *group)
{
    return malloc_kind(call, ptr_arr, bytes, group, true);
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
        for (s = segments; s; s = s->next)
            if (s->comm == comm && s->bytes[s->my_member] &&
                s->view[s->my_member] == (uintptr_t)ptr)
                break;
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
    s = segments;
    while (s && s->id != (uint64_t)id)
        s = s->next;
    rt_unlock();
    if (!s)
        armci_die(call, "no ARMCI segment matches the one the other members are freeing");
    if (!ptr && s->bytes[s->my_member])
        armci_die(call,
                  "argument ptr is NULL, but this process's block of the segment being "
                  "freed is %zu bytes: pass the pointer ARMCI_Malloc returned",
                  s->bytes[s->my_member]);

    /* Nobody may still be reading or writing the memory when it goes away. */
    sync_all_fence();
    MPI_Barrier(comm);
    rt_lock();
    struct segment **link = &segments;
    while (*link != s)
        link = &(*link)->next;
    *link = s->next;
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
        rt_unlock();
        free(r->addr);
        free(r);
        return 0;
    }
    rt_unlock();
    armci_die(call, "argument ptr=%p was not returned by ARMCI_Malloc_local", ptr);
}
