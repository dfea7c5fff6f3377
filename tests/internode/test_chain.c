/*
 * Long runs of small non-blocking operations, the traffic the transport
 * batches into chains of work requests (send_queue.h): every process keeps
 * up to 64 ARMCI_NbPut, ARMCI_NbGet and ARMCI_NbAcc of 8 to 256 bytes in
 * flight towards the other processes, mixed with blocking puts whose source
 * is overwritten at once, implicit-handle puts, ARMCI_Test polls, waits of
 * random handles, fences of one target and of all, and ARMCI_WaitAll.
 *
 * Each writer owns SLOTS doubles in every process's block and keeps a model
 * of them. In a round, writes go to one half of the slots and gets read the
 * other half (written and fenced in an earlier round), each get checked
 * byte for byte when its handle completes; at the end of a round the writer
 * fences, reads its whole slice back and compares it with the model. At
 * the end every process checks its own block against the models its
 * writers send it. Values are small integers, so accumulates are exact.
 *
 * Small updates that go through the data server share SENDs when they
 * follow one another (wire/protocol.h): beside the 8-256 B
 * accumulates there are strided puts and accumulates of short rows,
 * vector puts and accumulates, and float accumulates of odd lengths (4-28
 * bytes: the next request in a SEND starts padded) into a float area.
 * Usage: test_chain [rounds] [ops_per_round]
 */
#include <mpi.h>
#include <string.h>

#include "testutil.h"

#define SLOTS   1024 /* doubles each writer owns in each block */
#define WINDOW  64   /* operations in flight at most */
#define MAX_RUN 32   /* doubles one operation moves at most (256 B) */

enum kind { NONE, PUT, GET, ACC, UPDATE };

struct op {
    enum kind kind;
    armci_hdl_t hdl;
    int target, slot, n;
    double buf[MAX_RUN];               /* put/acc source, or get destination */
    double expect[MAX_RUN];            /* get: what it must read */
    void *src[MAX_RUN], *dst[MAX_RUN]; /* a vector's pieces */
    float fbuf[MAX_RUN];
};

static int me, nproc;
static void **seg;
static double **model; /* model[t]: my slots in t's block */
static float **fmodel; /* fmodel[t]: my float slots in t's float area */
static struct op ops[WINDOW];

static double *remote_slots(int t, int slot)
{
    return (double *)seg[t] + (size_t)me * SLOTS + slot;
}

/* The float area follows the doubles of every writer. */
static float *remote_floats(int t, int slot)
{
    return (float *)((double *)seg[t] + (size_t)nproc * SLOTS) + (size_t)me * SLOTS + slot;
}

/* 1 to MAX_RUN doubles, mostly 1 (8 B), sometimes past the inline size. */
static int run_length(uint64_t *rs)
{
    uint64_t r = test_rand(rs) % 16;
    return r < 10 ? 1 : r < 14 ? 1 + (int)(test_rand(rs) % 8) : 17 + (int)(test_rand(rs) % 16);
}

static void complete(struct op *o)
{
    if (o->kind == GET)
        CHECK(memcmp(o->buf, o->expect, sizeof(double) * (size_t)o->n) == 0,
              "NbGet of %d doubles at slot %d of rank %d: read %g, expected %g", o->n, o->slot,
              o->target, o->buf[0], o->expect[0]);
    o->kind = NONE;
}

static void wait_op(struct op *o)
{
    if (o->kind == NONE)
        return;
    ARMCI_Wait(&o->hdl);
    complete(o);
}

static void wait_all_ops(void)
{
    for (int i = 0; i < WINDOW; i++)
        wait_op(&ops[i]);
}

/* A free window entry: waits for a random busy one when all are busy. */
static struct op *free_op(uint64_t *rs)
{
    for (int tries = 0; tries < 4; tries++) {
        struct op *o = &ops[test_rand(rs) % WINDOW];
        if (o->kind == NONE)
            return o;
    }
    for (int i = 0; i < WINDOW; i++)
        if (ops[i].kind == NONE)
            return &ops[i];
    struct op *o = &ops[test_rand(rs) % WINDOW];
    if (test_rand(rs) % 2) {
        while (ARMCI_Test(&o->hdl) != 0) /* 0 means complete */
            ;
        ARMCI_Wait(&o->hdl); /* frees the handle */
        complete(o);
    } else {
        wait_op(o);
    }
    return o;
}

/* A strided put or accumulate of 2-4 rows of 1-4 doubles, spaced 1-4 doubles apart. */
static void strided_update(uint64_t *rs, struct op *o, int t, int write_base, bool acc)
{
    int row = 1 + (int)(test_rand(rs) % 4), rows = 2 + (int)(test_rand(rs) % 3);
    int pitch = row + 1 + (int)(test_rand(rs) % 4);
    int slot = write_base + (int)(test_rand(rs) % (uint64_t)(SLOTS / 2 - rows * pitch));
    double scale = 1.0;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < row; k++) {
            double v = (double)(test_rand(rs) % 1000);
            o->buf[r * row + k] = v;
            double *m = &model[t][slot + r * pitch + k];
            *m = acc ? *m + v : v;
        }
    int src_stride[1] = {row * (int)sizeof(double)}, dst_stride[1] = {pitch * (int)sizeof(double)};
    int count[2] = {row * (int)sizeof(double), rows};
    o->kind = UPDATE;
    if (acc)
        ARMCI_NbAccS(ARMCI_ACC_DBL, &scale, o->buf, src_stride, remote_slots(t, slot), dst_stride,
                     count, 1, t, &o->hdl);
    else
        ARMCI_NbPutS(o->buf, src_stride, remote_slots(t, slot), dst_stride, count, 1, t, &o->hdl);
}

/* A vector put or accumulate of 2-8 single doubles, 3 slots apart. */
static void vector_update(uint64_t *rs, struct op *o, int t, int write_base, bool acc)
{
    int k = 2 + (int)(test_rand(rs) % 7);
    int slot = write_base + (int)(test_rand(rs) % (uint64_t)(SLOTS / 2 - 3 * k));
    double scale = 1.0;
    for (int i = 0; i < k; i++) {
        double v = (double)(test_rand(rs) % 1000);
        o->buf[i] = v;
        double *m = &model[t][slot + 3 * i];
        *m = acc ? *m + v : v;
        o->src[i] = &o->buf[i];
        o->dst[i] = remote_slots(t, slot + 3 * i);
    }
    armci_giov_t iov = {.src_ptr_array = o->src,
                        .dst_ptr_array = o->dst,
                        .bytes = (int)sizeof(double),
                        .ptr_array_len = k};
    o->kind = UPDATE;
    if (acc)
        ARMCI_NbAccV(ARMCI_ACC_DBL, &scale, &iov, 1, t, &o->hdl);
    else
        ARMCI_NbPutV(&iov, 1, t, &o->hdl);
}

/* A float accumulate of 1-7 floats: payloads of 4-28 bytes, odd multiples of 4 too. */
static void float_acc(uint64_t *rs, struct op *o, int t, int write_base)
{
    int n = 1 + (int)(test_rand(rs) % 7);
    int slot = write_base + (int)(test_rand(rs) % (uint64_t)(SLOTS / 2 - n));
    float scale = 1.0f;
    for (int k = 0; k < n; k++) {
        o->fbuf[k] = (float)(test_rand(rs) % 1000);
        fmodel[t][slot + k] += o->fbuf[k];
    }
    o->kind = UPDATE;
    ARMCI_NbAcc(ARMCI_ACC_FLT, &scale, o->fbuf, remote_floats(t, slot), n * (int)sizeof(float), t,
                &o->hdl);
}

static void one_op(uint64_t *rs, int write_base, int read_base)
{
    int t = (me + 1 + (int)(test_rand(rs) % (uint64_t)(nproc - 1))) % nproc;
    int n = run_length(rs);
    int half = SLOTS / 2;
    uint64_t what = test_rand(rs) % 100;
    if (what < 3) {
        ARMCI_Fence(t);
        return;
    }
    if (what < 4) {
        ARMCI_AllFence();
        return;
    }
    if (what < 5) {
        ARMCI_WaitAll(); /* the implicit-handle puts */
        return;
    }
    if (what < 10) {
        /* Blocking, its source reused at once. */
        double src[MAX_RUN];
        int slot = write_base + (int)(test_rand(rs) % (uint64_t)(half - n));
        for (int k = 0; k < n; k++)
            src[k] = model[t][slot + k] = (double)(test_rand(rs) % 1000000);
        ARMCI_Put(src, remote_slots(t, slot), n * (int)sizeof(double), t);
        memset(src, 0xff, sizeof(src));
        return;
    }
    if (what < 15) {
        /* Implicit handle: completed by a fence or ARMCI_WaitAll. Its source must stay until
         * then: the model of another run of slots that nothing writes meanwhile would do, but
         * a static buffer per slot is simpler. */
        static double implicit_src[SLOTS];
        int slot = write_base + (int)(test_rand(rs) % (uint64_t)(half - n));
        ARMCI_WaitAll(); /* implicit_src may be reused */
        for (int k = 0; k < n; k++)
            implicit_src[slot + k] = model[t][slot + k] = (double)(test_rand(rs) % 1000000);
        ARMCI_NbPut(&implicit_src[slot], remote_slots(t, slot), n * (int)sizeof(double), t, NULL);
        return;
    }
    struct op *o = free_op(rs);
    o->target = t;
    o->n = n;
    ARMCI_INIT_HANDLE(&o->hdl);
    int bytes = n * (int)sizeof(double);
    if (what < 55) {
        o->kind = PUT;
        o->slot = write_base + (int)(test_rand(rs) % (uint64_t)(half - n));
        for (int k = 0; k < n; k++)
            o->buf[k] = model[t][o->slot + k] = (double)(test_rand(rs) % 1000000);
        ARMCI_NbPut(o->buf, remote_slots(t, o->slot), bytes, t, &o->hdl);
    } else if (what < 60) {
        strided_update(rs, o, t, write_base, test_rand(rs) % 2);
    } else if (what < 65) {
        vector_update(rs, o, t, write_base, test_rand(rs) % 2);
    } else if (what < 68) {
        float_acc(rs, o, t, write_base);
    } else if (what < 75) {
        o->kind = ACC;
        o->slot = write_base + (int)(test_rand(rs) % (uint64_t)(half - n));
        double scale = 1.0;
        for (int k = 0; k < n; k++) {
            o->buf[k] = (double)(test_rand(rs) % 1000);
            model[t][o->slot + k] += o->buf[k];
        }
        ARMCI_NbAcc(ARMCI_ACC_DBL, &scale, o->buf, remote_slots(t, o->slot), bytes, t, &o->hdl);
    } else {
        o->kind = GET;
        o->slot = read_base + (int)(test_rand(rs) % (uint64_t)(half - n));
        memcpy(o->expect, &model[t][o->slot], sizeof(double) * (size_t)n);
        memset(o->buf, 0xee, sizeof(o->buf));
        ARMCI_NbGet(remote_slots(t, o->slot), o->buf, bytes, t, &o->hdl);
    }
}

/* Everything complete and fenced: my slice of every block, read back, is the model. */
static void check_round(int round)
{
    wait_all_ops();
    ARMCI_WaitAll();
    ARMCI_AllFence();
    double back[SLOTS];
    float fback[SLOTS];
    for (int t = 0; t < nproc; t++) {
        if (t == me)
            continue;
        ARMCI_Get(remote_slots(t, 0), back, (int)sizeof(back), t);
        for (int s = 0; s < SLOTS; s++)
            CHECK(memcmp(&back[s], &model[t][s], sizeof(double)) == 0,
                  "round %d: slot %d of my slice at rank %d is %g, expected %g", round, s, t,
                  back[s], model[t][s]);
        ARMCI_Get(remote_floats(t, 0), fback, (int)sizeof(fback), t);
        for (int s = 0; s < SLOTS; s++)
            CHECK(memcmp(&fback[s], &fmodel[t][s], sizeof(float)) == 0,
                  "round %d: float slot %d of my slice at rank %d is %g, expected %g", round, s, t,
                  (double)fback[s], (double)fmodel[t][s]);
    }
}

/*
 * A blocking put is on its way when it returns: rank 0 puts a marker into rank 1's block and
 * then waits in MPI alone (no ARMCI call that could post what a chain held back); rank 1 sees
 * the marker arrive in its own memory. A blocking call whose request waited in the chain for
 * a later call would leave rank 1 waiting until its deadline.
 */
static void blocking_put_goes_at_once(void)
{
    const double marker = 4242.0;
    volatile double *slot = (volatile double *)seg[1]; /* writer 0's first slot in 1's block */
    int seen = 0;
    if (me == 0) {
        double v = marker;
        ARMCI_Put(&v, (double *)seg[1], sizeof(v), 1);
        model[1][0] = marker;
        MPI_Recv(&seen, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == 1) {
        double deadline = MPI_Wtime() + 20;
        while (*slot != marker && MPI_Wtime() < deadline)
            ;
        seen = *slot == marker;
        MPI_Send(&seen, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        CHECK(seen, "rank 0's blocking put did not arrive while rank 0 made no ARMCI call");
    }
    ARMCI_Barrier();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    nproc = armci_msg_nproc();
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int per_round = argc > 2 ? atoi(argv[2]) : 2000;
    CHECK(nproc >= 2, "needs 2 processes or more");

    seg = malloc(sizeof(void *) * (size_t)nproc);
    size_t block = (sizeof(double) + sizeof(float)) * SLOTS * (size_t)nproc;
    CHECK(ARMCI_Malloc(seg, block) == 0, "ARMCI_Malloc");
    memset(seg[me], 0, block);
    model = malloc(sizeof(double *) * (size_t)nproc);
    fmodel = malloc(sizeof(float *) * (size_t)nproc);
    for (int t = 0; t < nproc; t++) {
        model[t] = calloc(SLOTS, sizeof(double));
        fmodel[t] = calloc(SLOTS, sizeof(float));
    }
    ARMCI_Barrier();
    blocking_put_goes_at_once();

    uint64_t rs = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)me << 32 | 77);
    for (int round = 0; round < rounds; round++) {
        int write_base = round % 2 ? SLOTS / 2 : 0; /* gets read the other half */
        int read_base = SLOTS / 2 - write_base;
        for (int i = 0; i < per_round; i++)
            one_op(&rs, write_base, read_base);
        check_round(round);
    }

    /* The targets' view: each process compares its block with its writers' models. */
    ARMCI_Barrier();
    double *want = malloc(sizeof(double) * SLOTS);
    float *fwant = malloc(sizeof(float) * SLOTS);
    float *floats = (float *)((double *)seg[me] + (size_t)nproc * SLOTS);
    for (int w = 0; w < nproc; w++) {
        for (int t = 0; t < nproc; t++) {
            if (w == t)
                continue;
            if (me == w) {
                MPI_Send(model[t], SLOTS, MPI_DOUBLE, t, 0, MPI_COMM_WORLD);
                MPI_Send(fmodel[t], SLOTS, MPI_FLOAT, t, 1, MPI_COMM_WORLD);
            }
            if (me == t) {
                MPI_Recv(want, SLOTS, MPI_DOUBLE, w, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(fwant, SLOTS, MPI_FLOAT, w, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(memcmp((double *)seg[me] + (size_t)w * SLOTS, want, sizeof(double) * SLOTS) ==
                          0,
                      "the slice of writer %d in my block differs from its model", w);
                CHECK(memcmp(floats + (size_t)w * SLOTS, fwant, sizeof(float) * SLOTS) == 0,
                      "the float slice of writer %d in my block differs from its model", w);
            }
        }
    }
    free(want);
    free(fwant);
    ARMCI_Barrier();
    for (int t = 0; t < nproc; t++) {
        free(model[t]);
        free(fmodel[t]);
    }
    free(model);
    free(fmodel);
    ARMCI_Free(seg[me]);
    free(seg);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
