/*
 * ARMCI_Rmw from every rank at once on the same counters, same-node and
 * cross-node together: two owners (rank 0 and the last rank, on different
 * nodes when there are several) each hold a long and an int counter and a
 * long and an int swap word; every rank alternates between the owners, so
 * each word sees Rmw from its own node (the owner too) and from others in
 * the same moments. Whatever route ARMCI_Rmw takes (ARMCI_RMW; CPU,
 * loopback device atomics, device atomics, the data server), checked at
 * rank 0, byte for byte:
 *   - fetch-and-add: the tickets handed out are base, base+1, ... each once
 *     (sorted, compared with memcmp), and the counter ends at base + count;
 *     the long one starts just below 2^32, so its additions carry into the
 *     upper half;
 *   - swap: the old values seen, with the final value, are exactly the
 *     initial value and every value swapped in, each once;
 *   - the int beside the int counter, which its owner keeps storing to with
 *     plain stores, holds the owner's last store (an int Rmw touches only
 *     its 4 bytes).
 * With ARMCI_RMW=device every rank also holds exactly one connection per
 * node, its own node's loopback one included: the long forms went through
 * the device for same-node targets too (CPU atomics beside the device's
 * would race with them, too rarely to be seen in the counts).
 * Usage: test_rmw_mixed [iterations]
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/topology.h"
#include "odcm/cm.h"
#include "testutil.h"
#include "verbs/atomics.h"

/* The words of one owner's block. */
struct counters {
    long fadd;     /* fetch-and-add long */
    long swap;     /* swap long */
    int fadd_int;  /* fetch-and-add int */
    int neighbour; /* plain stores by the owner */
    int swap_int;  /* swap int */
    int pad;
};

#define LONG_BASE 0xFFFFFFF0L /* 16 below 2^32 */
#define OWNERS    2

static int me, nproc, iters;
static int owner_rank[OWNERS];

/* The owner rank r uses in its iteration i (alternating, so both at once). */
static int owner_of(int r, int i)
{
    return (i + r) % OWNERS;
}

/* What rank r swaps in at iteration i: unique over the job, never an initial value. */
static long long_swapped_in(int r, int i)
{
    return (1L << 40) + (long)r * iters + i + 1;
}

static int int_swapped_in(int r, int i)
{
    return r * iters + i + 1;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Sorts both and compares them byte for byte. */
static void expect_same_multiset(long *got, long *want, size_t n, const char *what, int owner)
{
    qsort(got, n, sizeof(long), cmp_long);
    qsort(want, n, sizeof(long), cmp_long);
    if (memcmp(got, want, n * sizeof(long)) == 0)
        return;
    for (size_t k = 0; k < n; k++)
        CHECK(got[k] == want[k],
              "%s of rank %d: sorted value %zu is %ld, expected %ld (%zu values)", what,
              owner_rank[owner], k, got[k], want[k], n);
}

/* One kind of record: value[r * iters + i] is what rank r got at iteration i. */
struct record {
    long *mine;
    long *all;
};

static void gather(struct record *rec)
{
    rec->all = me == 0 ? malloc(sizeof(long) * (size_t)iters * nproc) : NULL;
    MPI_Gather(rec->mine, iters, MPI_LONG, rec->all, iters, MPI_LONG, 0, MPI_COMM_WORLD);
}

enum { FADD_LONG, FADD_INT, SWAP_LONG, SWAP_INT, KINDS };
static const char *const kind_name[KINDS] = {"long fetch-and-add tickets",
                                             "int fetch-and-add tickets", "long swap values",
                                             "int swap values"};

/* Rank 0: checks one owner's words against what everyone got. */
static void check_owner(int o, struct record *rec, const struct counters *final)
{
    size_t n = 0;
    for (int r = 0; r < nproc; r++)
        for (int i = 0; i < iters; i++)
            n += owner_of(r, i) == o;
    /* One slot more for the swap words' final value and initial value. */
    long *got = malloc(sizeof(long) * (n + 1));
    long *want = malloc(sizeof(long) * (n + 1));
    for (int kind = 0; kind < KINDS; kind++) {
        size_t k = 0;
        for (int r = 0; r < nproc; r++)
            for (int i = 0; i < iters; i++) {
                if (owner_of(r, i) != o)
                    continue;
                got[k] = rec[kind].all[(size_t)r * iters + i];
                if (kind == SWAP_LONG)
                    want[k] = long_swapped_in(r, i);
                else if (kind == SWAP_INT)
                    want[k] = int_swapped_in(r, i);
                else
                    want[k] = (kind == FADD_LONG ? LONG_BASE : 0) + (long)k;
                k++;
            }
        if (kind == SWAP_LONG || kind == SWAP_INT) {
            got[k] = kind == SWAP_LONG ? final->swap : final->swap_int;
            want[k] = kind == SWAP_LONG ? -1L : -1; /* the initial value */
            k++;
        }
        expect_same_multiset(got, want, k, kind_name[kind], o);
    }
    CHECK(final->fadd == LONG_BASE + (long)n, "long counter of rank %d ends at %ld, expected %ld",
          owner_rank[o], final->fadd, LONG_BASE + (long)n);
    CHECK(final->fadd_int == (int)n, "int counter of rank %d ends at %d, expected %zu",
          owner_rank[o], final->fadd_int, n);
    CHECK(final->neighbour == iters, "the int beside rank %d's int counter is %d, expected %d",
          owner_rank[o], final->neighbour, iters);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    me = armci_msg_me();
    nproc = armci_msg_nproc();
    iters = argc > 1 ? atoi(argv[1]) : 1000;
    owner_rank[0] = 0;
    owner_rank[1] = nproc - 1;

    void **blk = malloc(sizeof(void *) * nproc);
    ARMCI_Malloc(blk, sizeof(struct counters));
    struct counters *mine = blk[me];
    *mine = (struct counters){.fadd = LONG_BASE, .swap = -1, .swap_int = -1};
    ARMCI_Barrier();

    struct record rec[KINDS];
    for (int kind = 0; kind < KINDS; kind++)
        rec[kind].mine = malloc(sizeof(long) * (size_t)iters);
    for (int i = 0; i < iters; i++) {
        int o = owner_of(me, i), p = owner_rank[o];
        struct counters *c = blk[p];
        long lv;
        int v;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &lv, &c->fadd, 1, p);
        rec[FADD_LONG].mine[i] = lv;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &v, &c->fadd_int, 1, p);
        rec[FADD_INT].mine[i] = v;
        lv = long_swapped_in(me, i);
        ARMCI_Rmw(ARMCI_SWAP_LONG, &lv, &c->swap, 0, p);
        rec[SWAP_LONG].mine[i] = lv;
        v = int_swapped_in(me, i);
        ARMCI_Rmw(ARMCI_SWAP, &v, &c->swap_int, 0, p);
        rec[SWAP_INT].mine[i] = v;
        if (me == owner_rank[0] || me == owner_rank[1])
            __atomic_store_n(&mine->neighbour, i + 1, __ATOMIC_RELAXED);
    }
    ARMCI_Barrier();

    for (int kind = 0; kind < KINDS; kind++)
        gather(&rec[kind]);
    if (me == 0)
        for (int o = 0; o < OWNERS; o++) {
            struct counters final;
            ARMCI_Get(blk[owner_rank[o]], &final, sizeof(final), owner_rank[o]);
            check_owner(o, rec, &final);
        }
    /* The case that asks for the device route must get it, or its paths go untested. */
    const char *asked = getenv("ARMCI_RMW");
    if (asked && !strcmp(asked, "device"))
        CHECK(rmw_route == RMW_ROUTE_DEVICE, "ARMCI_RMW=device, but Rmw takes the %s route",
              rmw_route_name(rmw_route));
    if (rmw_route_loopback())
        CHECK(cm_conn_count() == topo.num_nodes,
              "device route: %d connections, not one per node (%d, the own node's loopback "
              "one included)",
              cm_conn_count(), topo.num_nodes);
    for (int kind = 0; kind < KINDS; kind++) {
        free(rec[kind].mine);
        free(rec[kind].all);
    }
    ARMCI_Barrier();
    ARMCI_Free(mine);
    free(blk);
    TEST_DONE();
    ARMCI_Finalize();
    return 0;
}
