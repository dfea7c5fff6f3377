/*
 * Exactly once under broken connections, every request kind: each round, every rank sends to
 * the next node's ranks
 *   - strided puts of a 64 x 2 KiB box from ARMCI_Malloc'd memory (the data server pulls it
 *     by RDMA read) and of a box of short rows from malloc'd memory (packed, copied);
 *   - strided accumulates in place (ARMCI_Malloc'd rows of 1 KiB: the SEND gathers them) and
 *     copied (malloc'd: 16 KiB, past the server's request buffer, so the server pulls it from
 *     the request's bounce buffer), and contiguous accumulates of both kinds (16 KiB pulled in
 *     place from registered memory, 12 KiB pulled from a bounce buffer); non-blocking ones in
 *     place,
 *     several in flight (a later SEND's completion retires the earlier: replayed from records),
 *     and a contiguous one of 80 KB in place among them (two pieces, each a SEND of a header
 *     alone whose payload the server pulls: neither may open a SEND the next requests join);
 *   - vector puts, accumulates and gets; contiguous puts and gets;
 *   - fetch-and-add Rmw on a counter of rank 0, and a mutex-guarded read-modify-write
 *     (get, put, unlock) of another;
 *   - fences and barriers between rounds, and a fence the target checks itself: a put (a
 *     datagram over the hybrid UD path), ARMCI_Fence, then an MPI message; the target, on
 *     receiving it, must find the put in its own memory.
 * Then every byte is checked against what it must be, and every counter is exact: an update
 * lost, applied twice or applied with the wrong bytes, and an Rmw or lock step done twice,
 * each shows. The connection breaks come from the environment (run-breaks.sh: softib's
 * SOFTIB_RC_BREAK, ARMCI_TEST_HOOKS, UD loss with the hybrid path).
 *
 *   test_exactly_once [ROUNDS [fence]]   (default 12; `fence`: the fence the target checks,
 *                                         which waits in MPI between ARMCI calls)
 */
#include <mpi.h>
#include <armci.h>
#include <string.h>

#include "testutil.h"

#define BOX_ROWS      64
#define BOX_ROW       2048 /* the pulled box: 128 KiB from registered memory */
#define SHORT_ROWS    24
#define SHORT_ROW     100 /* a packed box from malloc'd memory */
#define ACC_ROWS      16
#define ACC_ROW       128   /* doubles: 1 KiB rows, gathered in place from registered memory */
#define ACC_CONTIG    2048  /* doubles: 16 KiB in place, past a request buffer (pulled in place) */
#define ACC_COPIED    1536  /* doubles: 12 KiB from malloc'd memory (pulled from a bounce buffer) */
#define ACC_CONTIG_NB 10000 /* doubles: 80 KB in place, non-blocking (two pulled pieces) */
#define VEC_SEGS      20
#define VEC_SEG       48

/* The layout of each rank's segment; the regions written by a source are its own. */
struct area {
    unsigned char box[BOX_ROWS][BOX_ROW * 2]; /* pulled box: every other 2 KiB */
    unsigned char shortbox[SHORT_ROWS][SHORT_ROW * 3];
    double acc_in_place[ACC_ROWS][ACC_ROW * 2];
    double acc_copied[ACC_ROWS][ACC_ROW * 2];
    double acc_contig[ACC_CONTIG];
    double acc_nb[ACC_ROWS][ACC_ROW * 2];
    double acc_contig_nb[ACC_CONTIG_NB];
    unsigned char vec[VEC_SEGS][VEC_SEG * 2];
    unsigned char contig[8192];
    long fenced[2];      /* the round last put here by the rank that targets me, then fenced */
    long counter;        /* rank 0: fetch-and-add */
    long locked_counter; /* rank 0: under mutex 0 */
};

static int me, np;
static struct area **areas;
static struct area *mine;

static uint64_t seed_of(int round, int src, int kind)
{
    return (uint64_t)round * 1000003u + (uint64_t)src * 1009u + (uint64_t)kind;
}

static void strided_puts(int round, int to, unsigned char *reg, unsigned char *heap)
{
    struct area *t = areas[to];
    /* The pulled box: contiguous 128 KiB of registered memory into every other 2 KiB. */
    fill_pattern(reg, BOX_ROWS * BOX_ROW, seed_of(round, me, 1));
    int src_stride[1] = {BOX_ROW}, dst_stride[1] = {BOX_ROW * 2}, count[2] = {BOX_ROW, BOX_ROWS};
    ARMCI_PutS(reg, src_stride, t->box, dst_stride, count, 1, to);
    /* Short rows from malloc'd memory: packed. */
    fill_pattern(heap, SHORT_ROWS * SHORT_ROW, seed_of(round, me, 2));
    int s2[1] = {SHORT_ROW}, d2[1] = {SHORT_ROW * 3}, c2[2] = {SHORT_ROW, SHORT_ROWS};
    ARMCI_PutS(heap, s2, t->shortbox, d2, c2, 1, to);
}

static void scribble(double *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = 1000.0;
}

/* Accumulates of 1.0 into the regions of rank `to`: in place, copied, contiguous. Each source
 * (reg: registered, one region each; heap: malloc'd) is filled just before its call and
 * scribbled on when the call returns, and nothing else writes it until the next round: a
 * request sent again later with its source's bytes would show in the sums. */
static void accumulates(int to, double *reg, double *heap)
{
    struct area *t = areas[to];
    double one = 1.0;
    double *contig = reg + ACC_ROWS * ACC_ROW;
    for (int i = 0; i < ACC_ROWS * ACC_ROW; i++)
        reg[i] = heap[i] = 1.0;
    int s[1] = {ACC_ROW * (int)sizeof(double)}, d[1] = {ACC_ROW * 2 * (int)sizeof(double)};
    int c[2] = {ACC_ROW * (int)sizeof(double), ACC_ROWS};
    /* A blocking call returns when its source may be reused: it is, at once, so that a
     * request sent again later with the source's new bytes shows in the sums. */
    ARMCI_AccS(ARMCI_ACC_DBL, &one, reg, s, t->acc_in_place, d, c, 1, to);
    scribble(reg, ACC_ROWS * ACC_ROW);
    ARMCI_AccS(ARMCI_ACC_DBL, &one, heap, s, t->acc_copied, d, c, 1, to);
    scribble(heap, ACC_ROWS * ACC_ROW);
    for (int i = 0; i < ACC_CONTIG; i++)
        contig[i] = heap[i] = 1.0;
    ARMCI_Acc(ARMCI_ACC_DBL, &one, contig, t->acc_contig, (int)sizeof(t->acc_contig), to);
    scribble(contig, ACC_CONTIG);
    ARMCI_Acc(ARMCI_ACC_DBL, &one, heap, t->acc_contig, ACC_COPIED * (int)sizeof(double), to);
    scribble(heap, ACC_COPIED);
}

/* Non-blocking accumulates in place from registered memory, NB_ACCS in flight at once, each
 * source its own until its handle completes; a contiguous one pulled in place (`contig`) goes
 * first, the strided ones behind it. */
#define NB_ACCS 3
static void nonblocking_accumulates(int to, double *reg, double *contig)
{
    struct area *t = areas[to];
    double one = 1.0;
    armci_hdl_t h[NB_ACCS], hc;
    for (int i = 0; i < ACC_CONTIG_NB; i++)
        contig[i] = 1.0;
    ARMCI_INIT_HANDLE(&hc);
    ARMCI_NbAcc(ARMCI_ACC_DBL, &one, contig, t->acc_contig_nb, (int)sizeof(t->acc_contig_nb), to,
                &hc);
    int s[1] = {ACC_ROW * (int)sizeof(double)}, d[1] = {ACC_ROW * 2 * (int)sizeof(double)};
    int c[2] = {ACC_ROW * (int)sizeof(double), ACC_ROWS};
    for (int k = 0; k < NB_ACCS; k++) {
        double *src = reg + (size_t)k * ACC_ROWS * ACC_ROW;
        for (int i = 0; i < ACC_ROWS * ACC_ROW; i++)
            src[i] = 1.0;
        ARMCI_INIT_HANDLE(&h[k]);
        ARMCI_NbAccS(ARMCI_ACC_DBL, &one, src, s, t->acc_nb, d, c, 1, to, &h[k]);
    }
    for (int k = 0; k < NB_ACCS; k++) {
        ARMCI_Wait(&h[k]);
        scribble(reg + (size_t)k * ACC_ROWS * ACC_ROW, ACC_ROWS * ACC_ROW);
    }
    ARMCI_Wait(&hc);
    scribble(contig, ACC_CONTIG_NB);
}

static void vectors_and_contig(int round, int to, unsigned char *buf)
{
    struct area *t = areas[to];
    void *src[VEC_SEGS], *dst[VEC_SEGS];
    fill_pattern(buf, VEC_SEGS * VEC_SEG, seed_of(round, me, 3));
    for (int i = 0; i < VEC_SEGS; i++) {
        src[i] = buf + i * VEC_SEG;
        dst[i] = t->vec[i];
    }
    armci_giov_t v = {
        .src_ptr_array = src, .dst_ptr_array = dst, .ptr_array_len = VEC_SEGS, .bytes = VEC_SEG};
    ARMCI_PutV(&v, 1, to);
    unsigned char *c = buf + VEC_SEGS * VEC_SEG;
    fill_pattern(c, sizeof(t->contig), seed_of(round, me, 4));
    ARMCI_Put(c, t->contig, (int)sizeof(t->contig), to);
}

/* Reads back what this rank wrote to `to` this round, and checks it byte for byte. */
static void read_back(int round, int to, unsigned char *buf)
{
    struct area *t = areas[to];
    int s[1] = {BOX_ROW * 2}, d[1] = {BOX_ROW}, c[2] = {BOX_ROW, BOX_ROWS};
    ARMCI_GetS(t->box, s, buf, d, c, 1, to);
    long bad = check_pattern(buf, BOX_ROWS * BOX_ROW, seed_of(round, me, 1));
    CHECK(bad < 0, "round %d: pulled strided put to rank %d wrong at byte %ld", round, to, bad);

    int s2[1] = {SHORT_ROW * 3}, d2[1] = {SHORT_ROW}, c2[2] = {SHORT_ROW, SHORT_ROWS};
    ARMCI_GetS(t->shortbox, s2, buf, d2, c2, 1, to);
    bad = check_pattern(buf, SHORT_ROWS * SHORT_ROW, seed_of(round, me, 2));
    CHECK(bad < 0, "round %d: packed strided put to rank %d wrong at byte %ld", round, to, bad);

    void *src[VEC_SEGS], *dst[VEC_SEGS];
    for (int i = 0; i < VEC_SEGS; i++) {
        src[i] = t->vec[i];
        dst[i] = buf + i * VEC_SEG;
    }
    armci_giov_t v = {
        .src_ptr_array = src, .dst_ptr_array = dst, .ptr_array_len = VEC_SEGS, .bytes = VEC_SEG};
    ARMCI_GetV(&v, 1, to);
    bad = check_pattern(buf, VEC_SEGS * VEC_SEG, seed_of(round, me, 3));
    CHECK(bad < 0, "round %d: vector put/get with rank %d wrong at byte %ld", round, to, bad);

    ARMCI_Get(t->contig, buf, (int)sizeof(t->contig), to);
    bad = check_pattern(buf, sizeof(t->contig), seed_of(round, me, 4));
    CHECK(bad < 0, "round %d: contiguous put/get with rank %d wrong at byte %ld", round, to, bad);
}

/* A fence completes every earlier operation to its target, whatever carried it: the target
 * reads the put in its own memory as soon as our MPI message says we fenced. */
static void fence_seen_by_target(int round, int to, int from)
{
    long stamp = 1000L * round + me + 1;
    ARMCI_Put(&stamp, &areas[to]->fenced[0], sizeof(stamp), to);
    ARMCI_Fence(to);
    long theirs = -1;
    MPI_Sendrecv(&stamp, 1, MPI_LONG, to, 11, &theirs, 1, MPI_LONG, from, 11, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    /* At least that put: its sender's stamps only grow, and it may be a round ahead by now. */
    volatile long *mine_fenced = &mine->fenced[0];
    long seen = *mine_fenced;
    CHECK(seen >= theirs,
          "round %d: rank %d fenced its put (%ld) before telling me, but my "
          "memory holds %ld",
          round, from, theirs, seen);
}

static void counters(long *fetched, int round)
{
    long old = -1;
    ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, &areas[0]->counter, 1, 0);
    fetched[round] = old;

    ARMCI_Lock(0, 0);
    long v = -1;
    ARMCI_Get(&areas[0]->locked_counter, &v, sizeof(v), 0);
    v++;
    ARMCI_Put(&v, &areas[0]->locked_counter, sizeof(v), 0);
    ARMCI_Fence(0);
    ARMCI_Unlock(0, 0);
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    me = armci_msg_me();
    np = armci_msg_nproc();
    int rounds = argc > 1 ? atoi(argv[1]) : 12;
    CHECK(np >= 2 && rounds > 0, "needs 2 or more processes and 1 or more rounds");

    areas = malloc(sizeof(*areas) * (size_t)np);
    CHECK(ARMCI_Malloc((void **)areas, sizeof(struct area)) == 0, "ARMCI_Malloc");
    mine = areas[me];
    memset(mine, 0, sizeof(*mine));
    CHECK(ARMCI_Create_mutexes(1) == 0, "ARMCI_Create_mutexes");
    unsigned char *reg = ARMCI_Malloc_local(BOX_ROWS * BOX_ROW);
    /* The accumulates' registered sources: strided, contiguous, non-blocking (NB_ACCS). */
    double *accs = ARMCI_Malloc_local(
        sizeof(double) * ((size_t)ACC_ROWS * ACC_ROW * (1 + NB_ACCS) + ACC_CONTIG + ACC_CONTIG_NB));
    unsigned char *heap = malloc(BOX_ROWS * BOX_ROW);
    long *fetched = malloc(sizeof(long) * (size_t)rounds);
    CHECK(reg && accs && heap && fetched, "out of memory");
    ARMCI_Barrier();

    /* Every rank sends to the ranks of the next node (or the next rank, with one node). */
    int to =
        (me + armci_domain_nprocs(ARMCI_DOMAIN_SMP, armci_domain_my_id(ARMCI_DOMAIN_SMP))) % np;
    if (to == me)
        to = (me + 1) % np;
    int from = -1; /* the rank that targets me */
    for (int r = 0; r < np; r++) {
        int t =
            (r + armci_domain_nprocs(ARMCI_DOMAIN_SMP, armci_domain_id(ARMCI_DOMAIN_SMP, r))) % np;
        if (t == r)
            t = (r + 1) % np;
        if (t == me)
            from = r;
    }
    CHECK(from >= 0, "no rank targets me: the pattern is no permutation");
    bool fence_check = argc > 2 && strcmp(argv[2], "fence") == 0;
    for (int round = 0; round < rounds; round++) {
        if (fence_check)
            fence_seen_by_target(round, to, from);
        strided_puts(round, to, reg, heap);
        accumulates(to, accs, (double *)heap);
        nonblocking_accumulates(to, accs + ACC_ROWS * ACC_ROW + ACC_CONTIG,
                                accs + ACC_ROWS * ACC_ROW * (1 + NB_ACCS) + ACC_CONTIG);
        vectors_and_contig(round, to, heap);
        counters(fetched, round);
        ARMCI_Fence(to);
        read_back(round, to, heap);
        if (round % 4 == 3)
            ARMCI_Barrier();
    }
    ARMCI_AllFence();
    ARMCI_Barrier();

    /* Accumulates: every element got 1.0 once per round from the one rank that targets me. */
    int senders = 0;
    for (int r = 0; r < np; r++) {
        int t =
            (r + armci_domain_nprocs(ARMCI_DOMAIN_SMP, armci_domain_id(ARMCI_DOMAIN_SMP, r))) % np;
        if (t == r)
            t = (r + 1) % np;
        senders += t == me;
    }
    double want = (double)rounds * senders;
    for (int i = 0; i < ACC_ROWS; i++)
        for (int j = 0; j < ACC_ROW * 2; j++) {
            double in_place = mine->acc_in_place[i][j], copied = mine->acc_copied[i][j];
            double w = j < ACC_ROW ? want : 0;
            CHECK(in_place == w, "in-place strided acc [%d][%d] = %g, not %g", i, j, in_place, w);
            CHECK(copied == w, "copied strided acc [%d][%d] = %g, not %g", i, j, copied, w);
            double nb = mine->acc_nb[i][j], wnb = w * NB_ACCS;
            CHECK(nb == wnb, "non-blocking in-place acc [%d][%d] = %g, not %g", i, j, nb, wnb);
        }
    for (int i = 0; i < ACC_CONTIG; i++) {
        double w = want * (i < ACC_COPIED ? 2 : 1);
        CHECK(mine->acc_contig[i] == w, "contiguous acc [%d] = %g, not %g", i, mine->acc_contig[i],
              w);
    }
    for (int i = 0; i < ACC_CONTIG_NB; i++)
        CHECK(mine->acc_contig_nb[i] == want, "non-blocking contiguous acc [%d] = %g, not %g", i,
              mine->acc_contig_nb[i], want);
    /* Counters: rounds x np increments, each fetched value handed out once. */
    if (me == 0) {
        CHECK(mine->counter == (long)rounds * np, "Rmw counter %ld, not %ld", mine->counter,
              (long)rounds * np);
        CHECK(mine->locked_counter == (long)rounds * np, "locked counter %ld, not %ld",
              mine->locked_counter, (long)rounds * np);
    }
    long sum = 0;
    for (int r = 0; r < rounds; r++) {
        CHECK(fetched[r] >= 0 && fetched[r] < (long)rounds * np, "Rmw fetched %ld", fetched[r]);
        CHECK(r == 0 || fetched[r] > fetched[r - 1], "Rmw fetched %ld after %ld", fetched[r],
              fetched[r - 1]);
        sum += fetched[r];
    }
    armci_msg_lgop(&sum, 1, "+");
    long total = (long)rounds * np;
    CHECK(sum == total * (total - 1) / 2, "Rmw fetched values sum to %ld, not %ld (one twice?)",
          sum, total * (total - 1) / 2);

    TEST_DONE();
    ARMCI_Free_local(reg);
    ARMCI_Free_local(accs);
    free(heap);
    free(fetched);
    ARMCI_Destroy_mutexes();
    ARMCI_Free(mine);
    free(areas);
    ARMCI_Finalize();
    return 0;
}
