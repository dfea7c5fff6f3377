/*
 * The data servers' symmetric mapping: with the members' mapping symmetric,
 * every node's data server maps its node's object L above the agreed
 * address, and the segment keeps an rkey per node only (and the node ids
 * when not every node has members). Arrays: the world's (every process the
 * same bytes), the members on even nodes (not every node: node ids), and,
 * with two or more processes a node, two disjoint groups allocated at once
 * (each node's first process, the others: both may pick the same address,
 * which the data server, in the first process, can then give one of them
 * only). For each: the per-node arrays kept and the `segments` bytes they
 * add (exactly the formula of seg_node_bytes), then every member writes its
 * slice of every member's block (small and large puts, a double
 * accumulate, a strided put) and reads it back (get, strided get), byte for
 * byte, and each owner checks its whole block.
 * Usage: test_server_symmetric MODE
 *   symmetric  every array is server-symmetric
 *   fallback   (ARMCI_TEST_HOOKS=16384: the last node's data server maps elsewhere) the arrays
 *              with members there keep a server base per node; the data is still right
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/segment.h"
#include "core/topology.h"
#include "testutil.h"

/* A member's slice of each block: small put, large put, accumulate, strided put. */
#define SLICE      20480
#define SMALL_AT   0
#define SMALL_LEN  40
#define LARGE_AT   64
#define LARGE_LEN  16384
#define ACC_AT     16512
#define ACC_N      64
#define STRIDED_AT 17152
#define ROWS       8
#define ROW_LEN    120
#define DST_STRIDE 200
#define SRC_STRIDE 150

enum { WORLD, EVEN_NODES, FIRSTS, OTHERS, ARRAYS };
static const char *const names[ARRAYS] = {"world", "even-nodes", "firsts", "others"};

static int me, n;
static bool fallback;

struct array {
    ARMCI_Group group;
    int size;   /* members */
    int mine;   /* my member index, -1 outside */
    int *rank;  /* [size] */
    void **ptr; /* [size] */
};

static bool member_of(int a, int p)
{
    int node = topo_node_of(p);
    switch (a) {
    case WORLD:
        return true;
    case EVEN_NODES:
        return node % 2 == 0;
    case FIRSTS:
        return topo_local_index(p) == 0;
    default:
        return topo_local_index(p) != 0;
    }
}

static void members(int a, struct array *x)
{
    x->rank = malloc(sizeof(int) * (size_t)n);
    x->size = 0;
    x->mine = -1;
    for (int p = 0; p < n; p++)
        if (member_of(a, p)) {
            if (p == me)
                x->mine = x->size;
            x->rank[x->size++] = p;
        }
    x->ptr = calloc((size_t)n, sizeof(void *));
    if (a != WORLD)
        ARMCI_Group_create(x->size, x->rank, &x->group);
}

static size_t block_bytes(const struct array *x)
{
    return (size_t)x->size * SLICE;
}

/* The content of member t's block before anyone writes: a pattern, doubles where the
 * accumulates go. */
static void initial(int a, int t, unsigned char *block, size_t bytes)
{
    fill_pattern(block, bytes, 7000 + 100 * (uint64_t)a + (uint64_t)t);
    for (size_t s = 0; s < bytes / SLICE; s++)
        for (int i = 0; i < ACC_N; i++) {
            double v = 100.0 * t + i;
            memcpy(block + s * SLICE + ACC_AT + 8 * (size_t)i, &v, 8);
        }
}

static uint64_t seed(int a, int t, int q, int what)
{
    return ((uint64_t)a << 40) ^ ((uint64_t)t << 24) ^ ((uint64_t)q << 8) ^ (uint64_t)what;
}

/* What member q writes into slice q of member t's block (in model, the slice so far). */
static void writes(int a, int t, int q, unsigned char *small, unsigned char *large, double *acc,
                   unsigned char *rows)
{
    fill_pattern(small, SMALL_LEN, seed(a, t, q, 1));
    fill_pattern(large, LARGE_LEN, seed(a, t, q, 2));
    for (int i = 0; i < ACC_N; i++)
        acc[i] = 1000.0 * q + i;
    fill_pattern(rows, ROWS * SRC_STRIDE, seed(a, t, q, 3));
}

static void apply(unsigned char *slice, const unsigned char *small, const unsigned char *large,
                  const double *acc, const unsigned char *rows)
{
    memcpy(slice + SMALL_AT, small, SMALL_LEN);
    memcpy(slice + LARGE_AT, large, LARGE_LEN);
    for (int i = 0; i < ACC_N; i++) {
        double v;
        memcpy(&v, slice + ACC_AT + 8 * (size_t)i, 8);
        v += 2.0 * acc[i];
        memcpy(slice + ACC_AT + 8 * (size_t)i, &v, 8);
    }
    for (int r = 0; r < ROWS; r++)
        memcpy(slice + STRIDED_AT + r * DST_STRIDE, rows + r * SRC_STRIDE, ROW_LEN);
}

/* Member t's whole block as everyone's writes leave it. */
static void model(int a, int t, const struct array *x, unsigned char *block)
{
    unsigned char small[SMALL_LEN], large[LARGE_LEN], rows[ROWS * SRC_STRIDE];
    double acc[ACC_N];
    initial(a, t, block, block_bytes(x));
    for (int q = 0; q < x->size; q++) {
        writes(a, t, q, small, large, acc, rows);
        apply(block + (size_t)q * SLICE, small, large, acc, rows);
    }
}

static long first_difference(const unsigned char *got, const unsigned char *want, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (got[i] != want[i])
            return (long)i;
    return -1;
}

/* My slice of member t's block: written by every kind of operation, read back. */
static void write_slice(int a, const struct array *x, int t, unsigned char *want)
{
    int proc = x->rank[t], q = x->mine;
    unsigned char small[SMALL_LEN], large[LARGE_LEN], rows[ROWS * SRC_STRIDE], got[SLICE];
    double acc[ACC_N], scale = 2.0;
    unsigned char *slice = (unsigned char *)x->ptr[t] + (size_t)q * SLICE;
    writes(a, t, q, small, large, acc, rows);
    ARMCI_Put(small, slice + SMALL_AT, SMALL_LEN, proc);
    ARMCI_Put(large, slice + LARGE_AT, LARGE_LEN, proc);
    ARMCI_Acc(ARMCI_ACC_DBL, &scale, acc, slice + ACC_AT, ACC_N * 8, proc);
    int src_stride = SRC_STRIDE, dst_stride = DST_STRIDE, count[2] = {ROW_LEN, ROWS};
    ARMCI_PutS(rows, &src_stride, slice + STRIDED_AT, &dst_stride, count, 1, proc);
    ARMCI_Fence(proc);

    unsigned char back[ROWS * SRC_STRIDE];
    memset(back, 0, sizeof(back));
    ARMCI_GetS(slice + STRIDED_AT, &dst_stride, back, &src_stride, count, 1, proc);
    for (int r = 0; r < ROWS; r++)
        CHECK(!memcmp(back + r * SRC_STRIDE, rows + r * SRC_STRIDE, ROW_LEN),
              "%s: strided get of row %d of my slice of rank %d's block", names[a], r, proc);
    memset(got, 0, sizeof(got));
    ARMCI_Get(slice, got, SLICE, proc);
    long bad = first_difference(got, want + (size_t)q * SLICE, SLICE);
    CHECK(bad < 0, "%s: byte %ld of my slice of rank %d's block (node %d), got %#x, want %#x",
          names[a], bad, proc, topo_node_of(proc), bad < 0 ? 0 : got[bad],
          bad < 0 ? 0 : want[(size_t)q * SLICE + (size_t)bad]);
}

/* Every member writes and reads back its slice of every block; each owner checks its own. */
static void check_data(int a, const struct array *x)
{
    size_t bytes = block_bytes(x);
    unsigned char *want = malloc(bytes);
    if (x->mine >= 0)
        initial(a, x->mine, x->ptr[x->mine], bytes);
    ARMCI_Barrier();
    for (int k = 1; x->mine >= 0 && k <= x->size; k++) {
        int t = (x->mine + k) % x->size; /* others first, mine last */
        model(a, t, x, want);
        write_slice(a, x, t, want);
    }
    ARMCI_AllFence();
    ARMCI_Barrier();
    if (x->mine >= 0) {
        model(a, x->mine, x, want);
        long bad = first_difference(x->ptr[x->mine], want, bytes);
        CHECK(bad < 0, "%s: byte %ld of my block after everyone's writes", names[a], bad);
    }
    free(want);
}

/* The nodes with members of array a, and whether the last node is one. */
static int nodes_of(const struct array *x, bool *has_last)
{
    int count = 0;
    *has_last = false;
    for (int node = 0; node < topo.num_nodes; node++) {
        bool has = false;
        for (int g = 0; g < x->size; g++)
            has = has || topo_node_of(x->rank[g]) == node;
        count += has;
        *has_last = *has_last || (has && node == topo.num_nodes - 1);
    }
    return count;
}

/* The largest node object of array a, in whole pages: how far above the members' mapping the
 * data servers map theirs. */
static uint64_t expected_offset(const struct array *x)
{
    uint64_t most = 0;
    for (int node = 0; node < topo.num_nodes; node++) {
        uint64_t fill = 0;
        for (int g = 0; g < x->size; g++)
            fill += topo_node_of(x->rank[g]) == node ? (block_bytes(x) + 63) / 64 * 64 : 0;
        most = fill > most ? fill : most;
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return (most + page - 1) / page * page;
}

/* The per-node arrays the segment keeps, and the `segments` bytes its allocation added. */
static void check_layout(int a, const struct array *x, long added, bool *symmetric_out)
{
    if (x->mine < 0)
        return;
    const struct segment *s = seg_of(x->ptr[x->mine]);
    CHECK(s && s->index.base, "%s: the members' mapping is not symmetric", names[a]);
    bool has_last;
    int nnodes = nodes_of(x, &has_last);
    CHECK(s->nnodes == nnodes, "%s: %d nodes, not %d", names[a], s->nnodes, nnodes);
    CHECK((s->node_ids != NULL) == (nnodes < topo.num_nodes), "%s: node ids %p with %d of %d nodes",
          names[a], (void *)s->node_ids, nnodes, topo.num_nodes);
    /* The disjoint groups may have picked one address on a node: its data server then maps
     * one of them elsewhere (either array may keep server bases, the data is right anyway). */
    bool may_collide = a == FIRSTS || a == OTHERS;
    bool want_symmetric = !(fallback && has_last);
    bool symmetric = s->server_bases == NULL;
    *symmetric_out = symmetric;
    if (!may_collide)
        CHECK(symmetric == want_symmetric, "%s: server bases %p (fallback %d, last node %d)",
              names[a], (void *)s->server_bases, fallback, has_last);
    uint64_t L = expected_offset(x);
    if (symmetric)
        CHECK(s->server_offset == L, "%s: server offset %llu, not %llu", names[a],
              (unsigned long long)s->server_offset, (unsigned long long)L);
    for (int k = 0; !symmetric && k < s->nnodes; k++) {
        int node = s->node_ids ? s->node_ids[k] : k;
        bool moved = s->server_bases[k] != s->index.base + L;
        if (!may_collide)
            CHECK(moved == (node == topo.num_nodes - 1), "%s: node %d's server base %#llx",
                  names[a], node, (unsigned long long)s->server_bases[k]);
    }
    /* sizeof(struct segment) and, a node, an rkey, its id unless every node has members,
     * its data server's base unless server-symmetric. */
    long per_node = 4 + (nnodes < topo.num_nodes ? 4 : 0) + (symmetric ? 0 : 8);
    long want = (long)sizeof(struct segment) + per_node * nnodes;
    CHECK(added == want && (long)seg_node_bytes(s) == per_node * nnodes,
          "%s: the segment table grew by %ld bytes, not %ld", names[a], added, want);
}

static void allocate(int a, struct array *x)
{
    size_t bytes = x->mine < 0 ? 0 : block_bytes(x);
    if (a == WORLD)
        ARMCI_Malloc(x->ptr, (armci_size_t)bytes);
    else if (x->mine >= 0)
        ARMCI_Malloc_group(x->ptr, (armci_size_t)bytes, &x->group);
}

static void release(int a, struct array *x)
{
    void *mine = x->mine >= 0 ? x->ptr[x->mine] : NULL;
    if (a == WORLD)
        ARMCI_Free(mine);
    else if (x->mine >= 0)
        ARMCI_Free_group(mine, &x->group);
    if (a != WORLD)
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
    CHECK(!strcmp(mode, "symmetric") || !strcmp(mode, "fallback"), "unknown mode '%s'", mode);
    fallback = !strcmp(mode, "fallback");
    CHECK(topo.num_nodes >= 2, "%d node(s): the test needs data servers", topo.num_nodes);

    /* A first allocation grows the slot table: the arrays' additions are theirs alone. */
    void **warm = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(warm, 64);
    ARMCI_Free(warm[me]);
    free(warm);

    long table0 = seg_table_bytes();
    bool pairs = topo_node_nprocs(0) >= 2; /* the disjoint groups need two processes a node */
    struct array x[ARRAYS];
    bool symmetric[ARRAYS] = {false};
    for (int a = 0; a < ARRAYS; a++)
        if (pairs || (a != FIRSTS && a != OTHERS))
            members(a, &x[a]); /* collective over the world: before any group allocates */
    for (int a = 0; a < ARRAYS; a++) {
        if ((a == FIRSTS || a == OTHERS) && !pairs)
            continue;
        long before = seg_table_bytes();
        allocate(a, &x[a]);
        check_layout(a, &x[a], seg_table_bytes() - before, &symmetric[a]);
        if (a == FIRSTS)
            continue; /* the disjoint groups allocate at once: no barrier between them */
        ARMCI_Barrier();
    }
    for (int a = 0; a < ARRAYS; a++)
        if (pairs || (a != FIRSTS && a != OTHERS))
            check_data(a, &x[a]);
    if (pairs) {
        /* Report which of the disjoint groups the data servers mapped at the agreed address. */
        int sym[2] = {x[FIRSTS].mine >= 0 && symmetric[FIRSTS],
                      x[OTHERS].mine >= 0 && symmetric[OTHERS]};
        uint64_t base[2] = {0, 0};
        if (x[FIRSTS].mine >= 0)
            base[0] = seg_of(x[FIRSTS].ptr[x[FIRSTS].mine])->index.base;
        if (x[OTHERS].mine >= 0)
            base[1] = seg_of(x[OTHERS].ptr[x[OTHERS].mine])->index.base;
        MPI_Allreduce(MPI_IN_PLACE, sym, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, base, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        if (me == 0)
            printf("disjoint groups: same address %d, server-symmetric %d and %d\n",
                   base[0] == base[1], sym[0], sym[1]);
    }
    for (int a = ARRAYS - 1; a >= 0; a--)
        if (pairs || (a != FIRSTS && a != OTHERS))
            release(a, &x[a]);
    CHECK(seg_table_bytes() == table0, "segments: %ld bytes after the frees, %ld before",
          seg_table_bytes(), table0);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
