/*
 * The armci_msg_* API and groups, checked against MPI's own answers:
 * gop for every type and op, scopes (all, node, masters), bcast, sel (records
 * of 8 B to 4 MiB, every key type, min and max, byte for byte; `test_msg MAX`
 * stops the records at MAX bytes: the multi-host bed proves the paths, not the sizes),
 * bintree, send/receive, exchange_address, and ARMCI groups with group
 * collectives and group allocation.
 */
#include <math.h>
#include <mpi.h>
#include <string.h>

#include "testutil.h"

static int me, nproc;

static long value_of(int rank, int i)
{
    /* Mixed signs so absmax/absmin differ from max/min. */
    return ((rank * 7 + i * 3) % 11) - 5;
}

#define CHECK_GOP(T, MT, fn, type)                                                         \
    do {                                                                                   \
        const char *ops[] = {"+", "*", "max", "min", "absmax", "absmin"};                  \
        MPI_Op mops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_MAX, MPI_MIN};           \
        for (int o = 0; o < 6; o++) {                                                      \
            T x[5], ref[5];                                                                \
            for (int i = 0; i < 5; i++) {                                                  \
                x[i] = (T)value_of(me, i);                                                 \
                if (o == 1)                                                                \
                    x[i] = (T)(value_of(me, i) % 3 == 0 ? 1 : 2);                          \
                ref[i] = o >= 4 ? (x[i] < 0 ? -x[i] : x[i]) : x[i];                        \
            }                                                                              \
            MPI_Allreduce(MPI_IN_PLACE, ref, 5, MT, mops[o], MPI_COMM_WORLD);              \
            fn(x, 5, (char *)ops[o]);                                                      \
            for (int i = 0; i < 5; i++)                                                    \
                CHECK(x[i] == ref[i], #fn " %s [%d]: %g vs %g", ops[o], i, (double)x[i],   \
                      (double)ref[i]);                                                     \
            T y[5];                                                                        \
            for (int i = 0; i < 5; i++)                                                    \
                y[i] = (T)(o == 1 ? (value_of(me, i) % 3 == 0 ? 1 : 2) : value_of(me, i)); \
            armci_msg_gop_scope(SCOPE_ALL, y, 5, (char *)ops[o], type);                    \
            for (int i = 0; i < 5; i++)                                                    \
                CHECK(y[i] == ref[i], "gop_scope " #T " %s [%d]", ops[o], i);              \
        }                                                                                  \
    } while (0)

static void test_gop(void)
{
    CHECK_GOP(int, MPI_INT, armci_msg_igop, ARMCI_INT);
    CHECK_GOP(long, MPI_LONG, armci_msg_lgop, ARMCI_LONG);
    CHECK_GOP(long long, MPI_LONG_LONG, armci_msg_llgop, ARMCI_LONG_LONG);
    CHECK_GOP(float, MPI_FLOAT, armci_msg_fgop, ARMCI_FLOAT);
    CHECK_GOP(double, MPI_DOUBLE, armci_msg_dgop, ARMCI_DOUBLE);
}

static void test_scopes(void)
{
    int node = armci_domain_my_id(ARMCI_DOMAIN_SMP);
    int nnodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    int on_node = armci_domain_nprocs(ARMCI_DOMAIN_SMP, node);
    int master = armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, node, 0);

    int one = 1;
    armci_msg_gop_scope(SCOPE_NODE, &one, 1, "+", ARMCI_INT);
    CHECK(one == on_node, "SCOPE_NODE sum %d, node has %d", one, on_node);
    if (me == master) {
        int m = 1;
        armci_msg_gop_scope(SCOPE_MASTERS, &m, 1, "+", ARMCI_INT);
        CHECK(m == nnodes, "SCOPE_MASTERS sum %d, %d nodes", m, nnodes);
    }

    long v = me == master ? 4242 + node : -1;
    armci_msg_bcast_scope(SCOPE_NODE, &v, sizeof(v), master);
    CHECK(v == 4242 + node, "SCOPE_NODE bcast gave %ld", v);
    double d = me == nproc - 1 ? 2.5 : 0;
    armci_msg_bcast(&d, sizeof(d), nproc - 1);
    CHECK(d == 2.5, "bcast gave %g", d);
    int b = me == 0 ? 77 : 0;
    armci_msg_brdcst(&b, sizeof(b), 0);
    CHECK(b == 77, "brdcst gave %d", b);
    int c = me == master ? 99 : 0;
    armci_msg_clus_brdcst(&c, sizeof(c));
    CHECK(c == 99, "clus_brdcst gave %d", c);

    /* Node membership agrees with ARMCI_Same_node. */
    for (int p = 0; p < nproc; p++)
        CHECK(ARMCI_Same_node(p) == (armci_domain_id(ARMCI_DOMAIN_SMP, p) == node),
              "ARMCI_Same_node(%d) disagrees with armci_domain_id", p);
}

static void test_sel_bintree(void)
{
    struct {
        double key;
        long index;
    } rec = {(double)((me * 5 + 3) % nproc) - 1.5, me};
    armci_msg_sel(&rec, sizeof(rec), "max", ARMCI_DOUBLE, 1);
    double want_max = -1e300;
    for (int r = 0; r < nproc; r++)
        want_max = fmax(want_max, (double)((r * 5 + 3) % nproc) - 1.5);
    CHECK(rec.key == want_max, "sel max key %g want %g", rec.key, want_max);
    CHECK((double)((rec.index * 5 + 3) % nproc) - 1.5 == rec.key, "sel max carried wrong index");

    /* Only odd ranks contribute to a min. */
    struct {
        int key;
        int who;
    } r2 = {100 - me, me};
    armci_msg_sel(&r2, sizeof(r2), "min", ARMCI_INT, me % 2);
    if (nproc > 1) {
        int last_odd = (nproc - 1) % 2 ? nproc - 1 : nproc - 2;
        CHECK(r2.who == last_odd, "sel min among odd ranks chose %d", r2.who);
    }

    int root, up, left, right;
    armci_msg_bintree(SCOPE_ALL, &root, &up, &left, &right);
    CHECK(root == 0 && up == (me ? (me - 1) / 2 : -1), "bintree parent");
    CHECK(left == (2 * me + 1 < nproc ? 2 * me + 1 : -1), "bintree left");
    CHECK(right == (2 * me + 2 < nproc ? 2 * me + 2 : -1), "bintree right");
}

/*
 * armci_msg_sel with records of 8 B to 4 MiB, every key type, "min" and "max", some ranks not
 * contributing: everyone gets the winner's whole record, byte for byte. MPI may reduce a large
 * buffer in slices; the selection must still see whole records.
 */
static long sel_key(int rank, int round)
{
    return (rank * 37 + round) % 101 - 50; /* distinct for up to 101 ranks */
}

static bool sel_contributes(int rank, int round)
{
    return nproc == 1 || (rank + round) % 3 != 0;
}

static void put_key(void *rec, int type, long key)
{
    switch (type) {
    case ARMCI_INT: {
        int k = (int)key;
        memcpy(rec, &k, sizeof(k));
        break;
    }
    case ARMCI_LONG:
        memcpy(rec, &key, sizeof(key));
        break;
    case ARMCI_LONG_LONG: {
        long long k = key;
        memcpy(rec, &k, sizeof(k));
        break;
    }
    case ARMCI_FLOAT: {
        float k = (float)key;
        memcpy(rec, &k, sizeof(k));
        break;
    }
    default: {
        double k = (double)key;
        memcpy(rec, &k, sizeof(k));
        break;
    }
    }
}

static size_t key_size(int type)
{
    return type == ARMCI_INT || type == ARMCI_FLOAT ? 4 : 8;
}

/* The record rank r offers in one round: its key, then a pattern of its own. */
static void sel_fill(unsigned char *rec, size_t n, int type, int rank, int round)
{
    fill_pattern(rec, n, (uint64_t)rank * 1000 + (uint64_t)round);
    put_key(rec, type, sel_key(rank, round));
}

static void test_sel_sizes(size_t max_bytes)
{
    const int types[] = {ARMCI_INT, ARMCI_LONG, ARMCI_LONG_LONG, ARMCI_FLOAT, ARMCI_DOUBLE};
    unsigned char *rec = malloc(max_bytes), *want = malloc(max_bytes);
    CHECK(rec && want, "out of memory");
    int round = 0;
    /* 8 B, then x4 up to 4 MiB, and 64 KiB (where slices began) and one byte either side. */
    size_t sizes[32];
    int nsizes = 0;
    for (size_t n = 8; n <= max_bytes; n *= 4)
        sizes[nsizes++] = n;
    for (size_t n = 65535; n <= 65537 && n <= max_bytes; n++)
        sizes[nsizes++] = n;
    sizes[nsizes++] = max_bytes;
    for (int si = 0; si < nsizes; si++)
        for (int ti = 0; ti < 5; ti++)
            for (int max = 0; max <= 1; max++, round++) {
                size_t n = sizes[si];
                int type = types[ti];
                if (n < key_size(type))
                    continue;
                int winner = -1;
                for (int r = 0; r < nproc; r++) {
                    if (!sel_contributes(r, round))
                        continue;
                    long k = sel_key(r, round), w = winner < 0 ? 0 : sel_key(winner, round);
                    if (winner < 0 || (max ? k > w : k < w))
                        winner = r;
                }
                sel_fill(rec, n, type, me, round);
                armci_msg_sel(rec, (int)n, max ? "max" : "min", type, sel_contributes(me, round));
                sel_fill(want, n, type, winner, round);
                long first = -1, wrong = 0;
                for (size_t i = 0; i < n; i++)
                    if (rec[i] != want[i]) {
                        first = first < 0 ? (long)i : first;
                        wrong++;
                    }
                CHECK(wrong == 0,
                      "sel %s of %zu-byte records, key type %d: %ld bytes differ from rank %d's "
                      "record, the first at %ld",
                      max ? "max" : "min", n, type, wrong, winner, first);
            }
    free(rec);
    free(want);
}

static void test_snd_rcv(void)
{
    int next = (me + 1) % nproc, prev = (me + nproc - 1) % nproc;
    long out[3] = {me, me * 2, me * 3}, in[3] = {0};
    int len = 0;
    /* Each blocking call faces a nonblocking one posted first: a blocking send before
     * its receive (a send to self with one process) completes only if MPI buffers it,
     * which Open MPI does for small messages and MPICH does not. The library's calls
     * use its own communicator, the world group's. */
    ARMCI_Group world;
    ARMCI_Group_get_world(&world);
    MPI_Request req;
    MPI_Irecv(in, sizeof(in), MPI_BYTE, prev, 7, world.comm, &req);
    armci_msg_snd(7, out, sizeof(out), next);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(in[0] == prev && in[1] == prev * 2 && in[2] == prev * 3, "snd ring");

    memset(in, 0, sizeof(in));
    MPI_Isend(out, sizeof(out), MPI_BYTE, next, 8, world.comm, &req);
    armci_msg_rcv(8, in, sizeof(in), &len, prev);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(len == sizeof(in) && in[0] == prev && in[1] == prev * 2 && in[2] == prev * 3,
          "rcv ring");

    void **addrs = calloc(nproc, sizeof(void *));
    addrs[me] = (void *)(uintptr_t)(0x1000 + me);
    armci_exchange_address(addrs, nproc);
    for (int r = 0; r < nproc; r++)
        CHECK(addrs[r] == (void *)(uintptr_t)(0x1000 + r), "exchange_address[%d]", r);
    free(addrs);
    armci_msg_barrier();
}

static void test_groups(void)
{
    /* Even ranks form a group (in reverse order, so group ranks != world ranks). */
    int n_even = (nproc + 1) / 2;
    int *pids = malloc(sizeof(int) * n_even);
    for (int i = 0; i < n_even; i++)
        pids[i] = 2 * (n_even - 1 - i);
    ARMCI_Group g;
    ARMCI_Group_create(n_even, pids, &g);
    if (me % 2 == 0) {
        int grank, gsize;
        ARMCI_Group_rank(&g, &grank);
        ARMCI_Group_size(&g, &gsize);
        CHECK(gsize == n_even, "group size %d", gsize);
        CHECK(ARMCI_Absolute_id(&g, grank) == me, "Absolute_id of my group rank");

        double x = me;
        armci_msg_group_dgop(&x, 1, "+", &g);
        double want = 0;
        for (int i = 0; i < n_even; i++)
            want += 2 * i;
        CHECK(x == want, "group dgop %g want %g", x, want);
        int v = me == 0 ? 5 : 0;
        armci_msg_group_bcast_scope(SCOPE_ALL, &v, sizeof(v), 0, &g);
        CHECK(v == 5, "group bcast");
        armci_msg_group_barrier(&g);

        /* Group allocation: ptr_arr is indexed by group rank; put to the next member. */
        void **ptrs = malloc(sizeof(void *) * gsize);
        ARMCI_Malloc_group(ptrs, 64 * sizeof(int), &g);
        int next = (grank + 1) % gsize;
        int tag = 1000 + me;
        ARMCI_Put(&tag, (int *)ptrs[next] + grank, sizeof(int), ARMCI_Absolute_id(&g, next));
        ARMCI_Fence(ARMCI_Absolute_id(&g, next));
        armci_msg_group_barrier(&g);
        int prev = (grank + gsize - 1) % gsize;
        CHECK(((int *)ptrs[grank])[prev] == 1000 + ARMCI_Absolute_id(&g, prev),
              "group allocation put");
        armci_msg_group_barrier(&g);
        ARMCI_Free_group(ptrs[grank], &g);
        free(ptrs);

        /* The group as default parents ARMCI_Group_create (pid_list holds its ranks). */
        ARMCI_Group world, sub;
        ARMCI_Group_get_world(&world);
        ARMCI_Group_set_default(&g);
        int last = gsize - 1;
        ARMCI_Group_create(1, &last, &sub);
        CHECK(ARMCI_Absolute_id(&sub, 0) == ARMCI_Absolute_id(&g, last),
              "ARMCI_Group_create under the default group");
        ARMCI_Group_free(&sub);
        ARMCI_Group_set_default(&world);
    }
    ARMCI_Group_free(&g); /* every process that got a handle frees it, as GA does */
    free(pids);
    armci_msg_barrier();
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    me = armci_msg_me();
    nproc = armci_msg_nproc();
    test_gop();
    test_scopes();
    test_sel_bintree();
    /* Records up to 4 MiB, or up to argv[1] bytes (at least 8). */
    size_t max_bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 4u << 20;
    test_sel_sizes(max_bytes < 8 ? 8 : max_bytes);
    test_snd_rcv();
    test_groups();
    double t0 = armci_timer(), t1 = armci_timer();
    CHECK(t1 >= t0, "armci_timer went backwards");
    TEST_DONE();
    ARMCI_Finalize();
    return 0;
}
