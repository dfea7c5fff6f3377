/*
 * ARMCI_Malloc's symmetric mapping: every member maps its node's object at
 * one address, so every process's ptr_arr is the same and each entry is the
 * block's address in its owner too. Five arrays: regular (every process the
 * same bytes, not a multiple of the alignment: no index runs), irregular
 * (sizes differ, one rank asks nothing: a run a block and a gap), blocked
 * (the first half a little more, as a block distribution: two runs with one
 * process a node), the world in reverse order (the same bytes, but group
 * order is not rank order: runs) and the even ranks. For each: the index
 * kept (none, or its runs: 16 B each when symmetric, 24 B with the block's
 * address when not), every process's ptr_arr compared, and the data byte for
 * byte (every block read by every member, same-node ones through ptr_arr
 * too, then written by its predecessor).
 * Usage: test_symmetric MODE
 *   symmetric  the mapping must be symmetric
 *   retry      (ARMCI_TEST_HOOKS=8192: the first candidate is taken in one process) the same
 *   fallback   (ARMCI_TEST_HOOKS=4096: every candidate is taken in one process) no array is
 *              symmetric: ptr_arr gives other nodes' blocks as their owners see them
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/segment.h"
#include "core/topology.h"
#include "testutil.h"

enum { REGULAR, IRREGULAR, BLOCKED, REVERSED, EVEN, ARRAYS };
static const char *const names[ARRAYS] = {"regular", "irregular", "blocked", "reversed", "even"};

static int me, n;
static bool symmetric;

struct array {
    ARMCI_Group group;
    bool world; /* the group is the world in rank order */
    int size;   /* members */
    int mine;   /* my member index, -1 outside */
    int *rank;  /* [size] world rank of each member */
    void **ptr; /* [size] */
};

static size_t bytes_of(int a, int member)
{
    if (a == IRREGULAR)
        return member == 1 ? 0 : 500 + 200 * (size_t)member;
    if (a == BLOCKED) /* the first half one element more, as a block distribution gives */
        return member < n / 2 ? 1100 : 1000;
    return 1000;
}

static uint64_t seed_of(int a, int member, int round)
{
    return (uint64_t)a * 1000003 + (uint64_t)member * 101 + (uint64_t)round;
}

/* The members of array a, in group order. */
static void members(int a, struct array *x)
{
    x->size = a == EVEN ? (n + 1) / 2 : n;
    x->rank = malloc(sizeof(int) * (size_t)x->size);
    for (int g = 0; g < x->size; g++)
        x->rank[g] = a == REVERSED ? n - 1 - g : a == EVEN ? 2 * g : g;
    x->world = a == REGULAR || a == IRREGULAR || a == BLOCKED;
    x->mine = -1;
    for (int g = 0; g < x->size; g++)
        if (x->rank[g] == me)
            x->mine = g;
    x->ptr = calloc(x->size > 0 ? (size_t)x->size : 1, sizeof(void *)); /* n >= 1 */
    if (!x->world)
        ARMCI_Group_create(x->size, x->rank, &x->group);
}

static void allocate(int a, struct array *x)
{
    armci_size_t bytes = x->mine < 0 ? 0 : (armci_size_t)bytes_of(a, x->mine);
    if (x->world)
        ARMCI_Malloc(x->ptr, bytes);
    else if (x->mine >= 0)
        ARMCI_Malloc_group(x->ptr, bytes, &x->group);
}

/* Every member's ptr_arr: the same in all (symmetric); else at least other nodes' entries are
 * their owners' own. */
static void compare_ptr_arrs(int a, const struct array *x)
{
    uint64_t *row = calloc((size_t)n, sizeof(uint64_t));
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)n * (size_t)n);
    for (int g = 0; x->mine >= 0 && g < x->size; g++)
        row[g] = (uintptr_t)x->ptr[g];
    MPI_Allgather(row, n, MPI_UINT64_T, all, n, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int q = 0; x->mine >= 0 && q < x->size; q++)
        for (int g = 0; g < x->size; g++) {
            uint64_t seen = all[(size_t)x->rank[q] * (size_t)n + (size_t)g];
            uint64_t own = all[(size_t)x->rank[g] * (size_t)n + (size_t)g];
            if (symmetric || topo_node_of(x->rank[q]) != topo_node_of(x->rank[g]))
                CHECK(seen == own && (own != 0) == (bytes_of(a, g) != 0),
                      "%s: rank %d's ptr_arr[%d] is %#llx, rank %d's own %#llx", names[a],
                      x->rank[q], g, (unsigned long long)seen, x->rank[g], (unsigned long long)own);
        }
    free(all);
    free(row);
}

/*
 * The runs the index of array a keeps (block_index.h), from the layout: each node's blocks in
 * group order, aligned to 64 B. By process, a block starts a run unless the one before it is
 * the previous process's, of its size, and (symmetric) at its place plus one step (the next on
 * its node) or at its place (the next node), as the run's second block set; a gap is a run.
 */
static uint32_t expected_runs(int a, const struct array *x)
{
    uint64_t *place = calloc((size_t)n, sizeof(uint64_t)), *fill = calloc((size_t)n, 8);
    size_t *bytes = calloc((size_t)n, sizeof(size_t));
    for (int g = 0; g < x->size; g++) {
        int p = x->rank[g], node = topo_node_of(p);
        bytes[p] = bytes_of(a, g);
        place[p] = fill[node];
        fill[node] += (bytes[p] + 63) / 64 * 64;
    }
    uint32_t runs = 0;
    int first = -1, last = -1; /* the current run's first and last process */
    for (int p = 0; p < n; p++) {
        if (!bytes[p])
            continue;
        uint64_t step = (bytes[p] + 63) / 64 * 64, after = (uint64_t)(p - first);
        bool stepped = first >= 0 && first + 1 <= last && place[first + 1] != place[first];
        bool extends = symmetric && last == p - 1 && first >= 0 && bytes[first] == bytes[p] &&
                       (first == last ? place[p] == place[first] + step || place[p] == place[first]
                                      : place[p] == place[first] + (stepped ? after * step : 0));
        if (!extends) {
            runs += 1 + (last >= 0 && last != p - 1); /* a gap before it */
            first = p;
        }
        last = p;
    }
    free(place);
    free(fill);
    free(bytes);
    return runs;
}

/* The index of my block's segment: symmetric or not, runs or none, each where ptr_arr says. */
static void check_index(int a, const struct array *x)
{
    if (x->mine < 0 || !x->ptr[x->mine])
        return;
    const struct block_index *ix = seg_index_of(x->ptr[x->mine]);
    CHECK(ix && (ix->base != 0) == symmetric, "%s: base %#lx", names[a],
          ix ? (unsigned long)ix->base : 0ul);
    bool regular = a == REGULAR && symmetric;
    uint32_t runs = regular ? 0 : expected_runs(a, x);
    CHECK((ix->regular != 0) == regular && ix->count == runs, "%s: %u runs, not %u (regular %llu)",
          names[a], ix->count, runs, (unsigned long long)ix->regular);
    /* One process a node: a block distribution is two runs, whatever the processes. */
    if (a == BLOCKED && symmetric && topo.num_nodes == n)
        CHECK(ix->count == 2, "%s: %u runs at one process a node", names[a], ix->count);
    for (int g = 0; g < x->size; g++) {
        struct block b;
        bool has = block_index_of(ix, x->rank[g], topo_node_of(x->rank[g]), &b);
        CHECK(has == (bytes_of(a, g) != 0), "%s: member %d has no block", names[a], g);
        if (has && (symmetric || !topo_same_node(x->rank[g])))
            CHECK(b.start == (uintptr_t)x->ptr[g] && b.bytes == bytes_of(a, g),
                  "%s: member %d's block at %#lx (%llu B), ptr_arr %p", names[a], g,
                  (unsigned long)b.start, (unsigned long long)b.bytes, x->ptr[g]);
    }
}

/* The index bytes a world array added, over my node: 16 B a run when symmetric, 24 B (a run
 * and the block's address) when not; none for a regular array. */
static void check_index_bytes(int a, const struct array *x, long added)
{
    long node = 0;
    MPI_Allreduce(&added, &node, 1, MPI_LONG, MPI_SUM, topo.node_comm);
    long want = a == REGULAR && symmetric ? 0 : (symmetric ? 16 : 24) * (long)expected_runs(a, x);
    CHECK(node == want, "%s: the node counts %ld bytes of index, not %ld", names[a], node, want);
}

/* Every member reads every block (same-node ones through ptr_arr too), then each writes its
 * successor's: byte for byte. */
static void check_data(int a, const struct array *x, unsigned char *buf)
{
    int g0 = x->mine;
    if (g0 >= 0 && bytes_of(a, g0))
        fill_pattern(x->ptr[g0], bytes_of(a, g0), seed_of(a, g0, 0));
    ARMCI_Barrier();
    for (int g = 0; g0 >= 0 && g < x->size; g++) {
        size_t len = bytes_of(a, g);
        if (!len)
            continue;
        memset(buf, 0, len);
        ARMCI_Get(x->ptr[g], buf, (int)len, x->rank[g]);
        long bad = check_pattern(buf, len, seed_of(a, g, 0));
        CHECK(bad < 0, "%s: byte %ld of member %d's block, got", names[a], bad, g);
        if (topo_same_node(x->rank[g]))
            CHECK((bad = check_pattern(x->ptr[g], len, seed_of(a, g, 0))) < 0,
                  "%s: byte %ld of member %d's block, read through ptr_arr", names[a], bad, g);
    }
    ARMCI_Barrier();
    if (g0 >= 0) {
        int next = (g0 + 1) % x->size;
        size_t len = bytes_of(a, next);
        if (len) {
            fill_pattern(buf, len, seed_of(a, next, 1));
            ARMCI_Put(buf, x->ptr[next], (int)len, x->rank[next]);
        }
    }
    ARMCI_AllFence();
    ARMCI_Barrier();
    if (g0 >= 0 && bytes_of(a, g0)) {
        long bad = check_pattern(x->ptr[g0], bytes_of(a, g0), seed_of(a, g0, 1));
        CHECK(bad < 0, "%s: byte %ld of my block, put by my predecessor", names[a], bad);
    }
}

static void release(struct array *x)
{
    void *mine = x->mine >= 0 ? x->ptr[x->mine] : NULL;
    if (x->world)
        ARMCI_Free(mine);
    else if (x->mine >= 0)
        ARMCI_Free_group(mine, &x->group);
    if (!x->world)
        ARMCI_Group_free(&x->group);
    free(x->ptr);
    free(x->rank);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    n = armci_msg_nproc();
    const char *mode = argc > 1 ? argv[1] : "symmetric";
    CHECK(!strcmp(mode, "symmetric") || !strcmp(mode, "retry") || !strcmp(mode, "fallback"),
          "unknown mode '%s'", mode);
    symmetric = strcmp(mode, "fallback") != 0;
    unsigned char *buf = malloc(1100 + 200 * (size_t)n);

    long index0 = seg_index_bytes();
    struct array x[ARRAYS];
    for (int a = 0; a < ARRAYS; a++) {
        members(a, &x[a]);
        long before = seg_index_bytes();
        allocate(a, &x[a]);
        if (x[a].world)
            check_index_bytes(a, &x[a], seg_index_bytes() - before);
        compare_ptr_arrs(a, &x[a]);
        check_index(a, &x[a]);
        check_data(a, &x[a], buf);
    }
    for (int a = 0; a < ARRAYS; a++)
        release(&x[a]);
    CHECK(seg_index_bytes() == index0, "index: %ld bytes after the frees, %ld before",
          seg_index_bytes(), index0);
    free(buf);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
