/*
 * Soak: a random mix of every operation class, issued by several threads of
 * every process (MPI_THREAD_MULTIPLE) for a given time, every result checked
 * against a shadow model. Meant to run across virtual nodes with a connection
 * cap, UD loss and deferred writes (meson.build, run-long.sh).
 *
 *   soak SECONDS [THREADS [EPOCH_MS]]
 *
 * The run is a series of epochs. In an epoch each worker thread issues random
 * operations until the epoch's deadline; then the main thread checks and
 * starts the next one with a fresh segment (ARMCI_Free + ARMCI_Malloc):
 *
 * - put/get (contiguous, strided, vector; blocking and non-blocking): thread t
 *   of rank r alone writes slot (r, t) of every process's segment, so it
 *   knows what the slot holds (its shadow) and checks every get against it.
 * - accumulate (contiguous, strided, vector): everyone adds to the shared
 *   cells of every process; each thread counts what it added, and after the
 *   barrier every process compares its cells with the sum of those counts.
 * - Rmw: fetch-and-add (int and long) counters, whose final value is the
 *   number of adds and whose returned old values must sum to 0 + 1 + ... +
 *   (n - 1); a swap cell, where the values swapped in equal the values
 *   swapped out plus the one left.
 * - locks: a cell per mutex, incremented by get + put under that mutex; its
 *   final value is the number of increments.
 * - fences: at the end of an epoch every thread puts to every process and
 *   fences (ARMCI_Fence or ARMCI_AllFence); after an MPI_Barrier (not
 *   ARMCI's, which would fence by itself) every process compares its slots
 *   with checksums of the writers' shadows.
 * - barriers, armci_msg collectives (reductions with several ops, broadcast)
 *   and Malloc/Free at every epoch boundary, checked where they give values.
 *
 * Threads of one process never queue on one remote mutex in greater number
 * than the credits a client has at a data server (ARMCI_SERVER_CREDITS): a
 * waiting lock request holds its credit until the grant.
 *
 * Prints per-class operation counts, the mismatches (exit status 1 if any),
 * the largest process's VmRSS and malloc heap in use at the start, after the
 * first epoch and at the end, and the connections closed and reopened under
 * the cap (all processes); the connection report (ARMCI_CONN_REPORT) follows
 * at Finalize.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "odcm/cm.h"
#include "proc_memory.h"
#include "testutil.h"

enum op_class {
    OP_PUT,
    OP_GET,
    OP_ACC,
    OP_PUTS,
    OP_GETS,
    OP_ACCS,
    OP_PUTV,
    OP_GETV,
    OP_ACCV,
    OP_RMW,
    OP_LOCK,
    OP_FENCE,
    OP_BARRIER,
    OP_MSG,
    OP_MALLOC,
    NCLASSES
};
static const char *class_name[NCLASSES] = {"put",  "get",   "acc",     "puts", "gets",
                                           "accs", "putv",  "getv",    "accv", "rmw",
                                           "lock", "fence", "barrier", "msg",  "malloc"};

/* A slot is PLANES x ROWS x COLS bytes (strided operations use 1 or 2 levels of it). */
#define COLS        128
#define ROWS        16
#define PLANES      4
#define SLOT        (PLANES * ROWS * COLS)
#define BLOCK       64 /* vector pieces: at most one per block of a slot */
#define ACC_COLS    16 /* shared accumulate cells: ACC_ROWS x ACC_COLS longs */
#define ACC_ROWS    16
#define ACC_CELLS   (ACC_ROWS * ACC_COLS)
#define NMUTEX      4
#define MAX_THREADS 16
#define MAX_REPORTS 20 /* mismatch messages printed per process */

/* Rmw counts and sums per target process. */
enum { FA_LONG_N, FA_LONG_SUM, FA_INT_N, FA_INT_SUM, SWAP_IN, SWAP_OUT, NRMW };
/* Rmw cells of a segment: fetch-and-add long, swap long, fetch-and-add int. */
enum { CELL_FA_LONG, CELL_SWAP, CELL_FA_INT, NRMW_CELLS };

struct worker {
    int id;
    uint64_t rng;
    pthread_t thread;
    unsigned char *shadow; /* [nprocs][SLOT]: what slot (me, id) holds in each process */
    unsigned char *plain;  /* local buffers: plain memory (bounce path) */
    unsigned char *reg;    /* and ARMCI_Malloc_local memory (zero-copy path) */
    long *acc_added;       /* [nprocs][ACC_CELLS] */
    long *rmw;             /* [nprocs][NRMW] */
    long *lock_incr;       /* [nprocs][NMUTEX] */
    long ops[NCLASSES];
};

static int me, nprocs, nthreads;
static void **seg; /* this epoch's segment, by rank */
static size_t seg_bytes;
static struct worker workers[MAX_THREADS];
static pthread_barrier_t epoch_start, epoch_end;
static double epoch_deadline;
static int stopping;
static atomic_long mismatches;
static long main_ops[NCLASSES];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mismatch(const char *fmt, ...)
{
    if (atomic_fetch_add(&mismatches, 1) >= MAX_REPORTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "soak MISMATCH rank %d: ", me);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- the segment's layout ---- */

static size_t slots_bytes(void)
{
    return (size_t)nprocs * (size_t)nthreads * SLOT;
}

static unsigned char *slot_at(int proc, int origin, int thread)
{
    return (unsigned char *)seg[proc] + ((size_t)origin * (size_t)nthreads + (size_t)thread) * SLOT;
}

static long *acc_cells(int proc)
{
    return (long *)((char *)seg[proc] + slots_bytes());
}

static long *rmw_cell(int proc, int which)
{
    return acc_cells(proc) + ACC_CELLS + which;
}

static long *lock_cell(int proc, int mutex)
{
    return acc_cells(proc) + ACC_CELLS + NRMW_CELLS + mutex;
}

static size_t layout_bytes(void)
{
    return slots_bytes() + sizeof(long) * (ACC_CELLS + NRMW_CELLS + NMUTEX);
}

/* ---- random choices ---- */

static uint64_t rnd(struct worker *w, uint64_t n)
{
    return test_rand(&w->rng) % n;
}

/* A length in [1, max]: small ones more often (inline sends, one packet, several). */
static size_t rnd_len(struct worker *w, size_t max)
{
    size_t cap = (size_t[]){16, 256, 4096, SLOT}[rnd(w, 4)];
    cap = cap < max ? cap : max;
    return 1 + rnd(w, cap);
}

static void fill_random(struct worker *w, unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(test_rand(&w->rng) >> 56);
}

static unsigned char *local_buffer(struct worker *w)
{
    return rnd(w, 2) ? w->reg : w->plain;
}

/* Non-blocking with a wait, or blocking. */
static bool use_handle(struct worker *w, armci_hdl_t *h)
{
    if (rnd(w, 3))
        return false;
    ARMCI_INIT_HANDLE(h);
    return true;
}

static void compare(const char *what, int proc, size_t off, const unsigned char *got,
                    const unsigned char *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            mismatch("%s from rank %d: slot byte %zu is %u, expected %u", what, proc, off + i,
                     got[i], want[i]);
            return;
        }
    }
}

/* ---- contiguous ---- */

static void do_put(struct worker *w, int p)
{
    size_t off = rnd(w, SLOT), len = rnd_len(w, SLOT - off);
    unsigned char *buf = local_buffer(w);
    fill_random(w, buf, len);
    unsigned char *dst = slot_at(p, me, w->id) + off;
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbPut(buf, dst, (int)len, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_Put(buf, dst, (int)len, p);
    }
    memcpy(w->shadow + (size_t)p * SLOT + off, buf, len);
    w->ops[OP_PUT]++;
}

static void do_get(struct worker *w, int p)
{
    size_t off = rnd(w, SLOT), len = rnd_len(w, SLOT - off);
    unsigned char *buf = local_buffer(w);
    unsigned char *src = slot_at(p, me, w->id) + off;
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbGet(src, buf, (int)len, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_Get(src, buf, (int)len, p);
    }
    compare("get", p, off, buf, w->shadow + (size_t)p * SLOT + off, len);
    w->ops[OP_GET]++;
}

/* ---- strided: a box of the slot seen as PLANES x ROWS x COLS ---- */

struct box {
    int levels;
    int count[3];
    int remote_stride[2], local_stride[2];
    size_t remote_off; /* of the box's first byte in the slot */
};

static struct box random_box(struct worker *w)
{
    struct box b = {.levels = 1 + (int)rnd(w, 2), .remote_stride = {COLS, ROWS * COLS}};
    int c0 = (int)rnd(w, COLS), r0 = (int)rnd(w, ROWS), z0 = (int)rnd(w, PLANES);
    b.count[0] = 1 + (int)rnd(w, (uint64_t)(COLS - c0));
    b.count[1] = 1 + (int)rnd(w, (uint64_t)(ROWS - r0));
    b.count[2] = b.levels == 2 ? 1 + (int)rnd(w, (uint64_t)(PLANES - z0)) : 1;
    if (b.levels == 1)
        z0 = 0;
    /* Locally the rows are packed, or padded: the two sides' strides differ. */
    b.local_stride[0] = b.count[0] + (int)rnd(w, 9);
    b.local_stride[1] = b.local_stride[0] * b.count[1] + (int)rnd(w, 9);
    b.remote_off = (size_t)z0 * ROWS * COLS + (size_t)r0 * COLS + (size_t)c0;
    return b;
}

/* Copies the box's rows between the slot's shadow and the local buffer, or compares them. */
enum rows_do { ROWS_TO_SHADOW, ROWS_COMPARE };
static void box_rows(const struct box *b, enum rows_do what, unsigned char *shadow,
                     unsigned char *buf, int proc)
{
    for (int z = 0; z < b->count[2]; z++) {
        for (int r = 0; r < b->count[1]; r++) {
            size_t so = b->remote_off + (size_t)z * ROWS * COLS + (size_t)r * COLS;
            size_t lo =
                (size_t)z * (size_t)b->local_stride[1] + (size_t)r * (size_t)b->local_stride[0];
            if (what == ROWS_TO_SHADOW)
                memcpy(shadow + so, buf + lo, (size_t)b->count[0]);
            else
                compare("strided get", proc, so, buf + lo, shadow + so, (size_t)b->count[0]);
        }
    }
}

static void do_puts(struct worker *w, int p)
{
    struct box b = random_box(w);
    unsigned char *buf = local_buffer(w);
    fill_random(w, buf, (size_t)b.local_stride[1] * (size_t)b.count[2]);
    unsigned char *dst = slot_at(p, me, w->id) + b.remote_off;
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbPutS(buf, b.local_stride, dst, b.remote_stride, b.count, b.levels, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_PutS(buf, b.local_stride, dst, b.remote_stride, b.count, b.levels, p);
    }
    box_rows(&b, ROWS_TO_SHADOW, w->shadow + (size_t)p * SLOT, buf, p);
    w->ops[OP_PUTS]++;
}

static void do_gets(struct worker *w, int p)
{
    struct box b = random_box(w);
    unsigned char *buf = local_buffer(w);
    unsigned char *src = slot_at(p, me, w->id) + b.remote_off;
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbGetS(src, b.remote_stride, buf, b.local_stride, b.count, b.levels, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_GetS(src, b.remote_stride, buf, b.local_stride, b.count, b.levels, p);
    }
    box_rows(&b, ROWS_COMPARE, w->shadow + (size_t)p * SLOT, buf, p);
    w->ops[OP_GETS]++;
}

/* ---- vector: pieces in distinct blocks of the slot ---- */

struct pieces {
    int n, bytes;
    size_t off[SLOT / BLOCK];
    void *remote[SLOT / BLOCK], *local[SLOT / BLOCK];
};

static void random_pieces(struct worker *w, struct pieces *v, int p, unsigned char *buf)
{
    int order[SLOT / BLOCK];
    for (int i = 0; i < SLOT / BLOCK; i++)
        order[i] = i;
    v->n = 1 + (int)rnd(w, 16);
    v->bytes = 1 + (int)rnd(w, BLOCK);
    int within = (int)rnd(w, (uint64_t)(BLOCK - v->bytes + 1));
    for (int i = 0; i < v->n; i++) {
        int j = i + (int)rnd(w, (uint64_t)(SLOT / BLOCK - i));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
        v->off[i] = (size_t)order[i] * BLOCK + (size_t)within;
        v->remote[i] = slot_at(p, me, w->id) + v->off[i];
        v->local[i] = buf + (size_t)i * BLOCK; /* not packed: gaps between pieces */
    }
}

static void do_putv(struct worker *w, int p)
{
    struct pieces v;
    unsigned char *buf = local_buffer(w);
    random_pieces(w, &v, p, buf);
    fill_random(w, buf, (size_t)v.n * BLOCK);
    armci_giov_t iov = {.src_ptr_array = v.local,
                        .dst_ptr_array = v.remote,
                        .bytes = v.bytes,
                        .ptr_array_len = v.n};
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbPutV(&iov, 1, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_PutV(&iov, 1, p);
    }
    for (int i = 0; i < v.n; i++)
        memcpy(w->shadow + (size_t)p * SLOT + v.off[i], v.local[i], (size_t)v.bytes);
    w->ops[OP_PUTV]++;
}

static void do_getv(struct worker *w, int p)
{
    struct pieces v;
    unsigned char *buf = local_buffer(w);
    random_pieces(w, &v, p, buf);
    armci_giov_t iov = {.src_ptr_array = v.remote,
                        .dst_ptr_array = v.local,
                        .bytes = v.bytes,
                        .ptr_array_len = v.n};
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbGetV(&iov, 1, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_GetV(&iov, 1, p);
    }
    for (int i = 0; i < v.n; i++)
        compare("vector get", p, v.off[i], v.local[i], w->shadow + (size_t)p * SLOT + v.off[i],
                (size_t)v.bytes);
    w->ops[OP_GETV]++;
}

/* ---- accumulate into the shared cells ---- */

/* Random addends (and scale) whose sums stay far from overflow. */
static long random_addend(struct worker *w)
{
    return (long)rnd(w, 2001) - 1000;
}

static void record_acc(struct worker *w, int p, int cell, long scale, long addend)
{
    w->acc_added[(size_t)p * ACC_CELLS + (size_t)cell] += scale * addend;
}

static void do_acc(struct worker *w, int p)
{
    int first = (int)rnd(w, ACC_CELLS), n = 1 + (int)rnd(w, (uint64_t)(ACC_CELLS - first));
    long scale = 1 + (long)rnd(w, 3);
    long *src = (long *)local_buffer(w);
    for (int i = 0; i < n; i++) {
        src[i] = random_addend(w);
        record_acc(w, p, first + i, scale, src[i]);
    }
    void *dst = acc_cells(p) + first;
    int bytes = n * (int)sizeof(long);
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbAcc(ARMCI_ACC_LNG, &scale, src, dst, bytes, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_Acc(ARMCI_ACC_LNG, &scale, src, dst, bytes, p);
    }
    w->ops[OP_ACC]++;
}

static void do_accs(struct worker *w, int p)
{
    int c0 = (int)rnd(w, ACC_COLS), r0 = (int)rnd(w, ACC_ROWS);
    int cols = 1 + (int)rnd(w, (uint64_t)(ACC_COLS - c0)),
        rows = 1 + (int)rnd(w, (uint64_t)(ACC_ROWS - r0));
    int local_cols = cols + (int)rnd(w, 3);
    long scale = 1 + (long)rnd(w, 3);
    long *src = (long *)local_buffer(w);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            long a = random_addend(w);
            src[r * local_cols + c] = a;
            record_acc(w, p, (r0 + r) * ACC_COLS + c0 + c, scale, a);
        }
    int count[2] = {cols * (int)sizeof(long), rows};
    int local_stride[1] = {local_cols * (int)sizeof(long)};
    int remote_stride[1] = {ACC_COLS * (int)sizeof(long)};
    void *dst = acc_cells(p) + r0 * ACC_COLS + c0;
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbAccS(ARMCI_ACC_LNG, &scale, src, local_stride, dst, remote_stride, count, 1, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_AccS(ARMCI_ACC_LNG, &scale, src, local_stride, dst, remote_stride, count, 1, p);
    }
    w->ops[OP_ACCS]++;
}

/* Pieces of `len` cells, each in its own group of 8 cells. */
static void do_accv(struct worker *w, int p)
{
    enum { GROUP = 8, NGROUPS = ACC_CELLS / GROUP };
    int order[NGROUPS];
    for (int i = 0; i < NGROUPS; i++)
        order[i] = i;
    int n = 1 + (int)rnd(w, 12), len = 1 + (int)rnd(w, GROUP);
    long scale = 1 + (long)rnd(w, 3);
    long *src = (long *)local_buffer(w);
    void *remote[NGROUPS], *local[NGROUPS];
    for (int i = 0; i < n; i++) {
        int j = i + (int)rnd(w, (uint64_t)(NGROUPS - i));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
        int cell = order[i] * GROUP + (int)rnd(w, (uint64_t)(GROUP - len + 1));
        remote[i] = acc_cells(p) + cell;
        local[i] = src + i * GROUP;
        for (int k = 0; k < len; k++) {
            src[i * GROUP + k] = random_addend(w);
            record_acc(w, p, cell + k, scale, src[i * GROUP + k]);
        }
    }
    armci_giov_t iov = {.src_ptr_array = local,
                        .dst_ptr_array = remote,
                        .bytes = len * (int)sizeof(long),
                        .ptr_array_len = n};
    armci_hdl_t h;
    if (use_handle(w, &h)) {
        ARMCI_NbAccV(ARMCI_ACC_LNG, &scale, &iov, 1, p, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_AccV(ARMCI_ACC_LNG, &scale, &iov, 1, p);
    }
    w->ops[OP_ACCV]++;
}

/* ---- Rmw, locks, fences ---- */

static void do_rmw(struct worker *w, int p)
{
    long *counts = w->rmw + (size_t)p * NRMW;
    switch (rnd(w, 3)) {
    case 0: {
        long old;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, rmw_cell(p, CELL_FA_LONG), 1, p);
        counts[FA_LONG_N]++;
        counts[FA_LONG_SUM] += old;
        break;
    }
    case 1: {
        int old;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &old, rmw_cell(p, CELL_FA_INT), 1, p);
        counts[FA_INT_N]++;
        counts[FA_INT_SUM] += old;
        break;
    }
    default: {
        long in = 1 + (long)rnd(w, 1000000), value = in;
        ARMCI_Rmw(ARMCI_SWAP_LONG, &value, rmw_cell(p, CELL_SWAP), 0, p);
        counts[SWAP_IN] += in;
        counts[SWAP_OUT] += value;
        break;
    }
    }
    w->ops[OP_RMW]++;
}

/* A read-modify-write of the mutex's cell, by get and put, under the mutex. */
static void do_lock(struct worker *w, int p)
{
    int m = (int)rnd(w, NMUTEX);
    long value;
    ARMCI_Lock(m, p);
    ARMCI_Get(lock_cell(p, m), &value, sizeof(value), p);
    value++;
    ARMCI_Put(&value, lock_cell(p, m), sizeof(value), p);
    ARMCI_Fence(p); /* the put is there before the next holder reads */
    ARMCI_Unlock(m, p);
    w->lock_incr[(size_t)p * NMUTEX + (size_t)m]++;
    w->ops[OP_LOCK]++;
}

static void do_fence(struct worker *w, int p)
{
    if (rnd(w, 4))
        ARMCI_Fence(p);
    else
        ARMCI_AllFence();
    w->ops[OP_FENCE]++;
}

static void (*const operations[])(struct worker *, int) = {
    do_put, do_get,  do_puts, do_gets, do_putv, do_getv,
    do_acc, do_accs, do_accv, do_rmw,  do_lock, do_fence,
};

/*
 * The epoch's last writes: small puts to every process (inline-sized among
 * them), then fences; the main thread checks that they arrived.
 */
static void final_puts(struct worker *w)
{
    bool all = rnd(w, 2);
    for (int p = 0; p < nprocs; p++) {
        for (int k = 0; k < 4; k++) {
            size_t len = 1 + rnd(w, 256), off = rnd(w, SLOT - len);
            unsigned char *buf = w->plain + k * 256;
            fill_random(w, buf, len);
            ARMCI_Put(buf, slot_at(p, me, w->id) + off, (int)len, p);
            memcpy(w->shadow + (size_t)p * SLOT + off, buf, len);
            w->ops[OP_PUT]++;
        }
        if (!all) {
            ARMCI_Fence(p);
            w->ops[OP_FENCE]++;
        }
    }
    if (all) {
        ARMCI_AllFence();
        w->ops[OP_FENCE]++;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (;;) {
        pthread_barrier_wait(&epoch_start);
        if (stopping)
            return NULL;
        while (now() < epoch_deadline) {
            int p = (int)rnd(w, (uint64_t)nprocs);
            operations[rnd(w, sizeof(operations) / sizeof(operations[0]))](w, p);
        }
        final_puts(w);
        pthread_barrier_wait(&epoch_end);
    }
}

/* ---- checks at the end of an epoch (main thread) ---- */

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* After fences and an MPI barrier only: every slot of mine holds what its writer wrote. */
static void check_slots_after_fence(void)
{
    size_t n = (size_t)nprocs * (size_t)nthreads;
    uint64_t *expected_there = malloc(sizeof(uint64_t) * n),
             *expected_here = malloc(sizeof(uint64_t) * n);
    for (int p = 0; p < nprocs; p++)
        for (int t = 0; t < nthreads; t++)
            expected_there[(size_t)p * nthreads + t] =
                checksum(workers[t].shadow + (size_t)p * SLOT, SLOT);
    MPI_Alltoall(expected_there, nthreads, MPI_UINT64_T, expected_here, nthreads, MPI_UINT64_T,
                 MPI_COMM_WORLD);
    for (int r = 0; r < nprocs; r++)
        for (int t = 0; t < nthreads; t++)
            if (checksum(slot_at(me, r, t), SLOT) != expected_here[(size_t)r * nthreads + t])
                mismatch(
                    "after the fences, the slot of rank %d thread %d differs from what it wrote", r,
                    t);
    free(expected_there);
    free(expected_here);
}

/* Accumulate, Rmw and lock cells against everyone's counts, summed by armci_msg_lgop. */
static void check_cells(void)
{
    size_t per = ACC_CELLS + NRMW + NMUTEX, n = (size_t)nprocs * per;
    long *sum = calloc(n, sizeof(long));
    for (int t = 0; t < nthreads; t++) {
        struct worker *w = &workers[t];
        for (int p = 0; p < nprocs; p++) {
            long *s = sum + (size_t)p * per;
            for (int i = 0; i < ACC_CELLS; i++)
                s[i] += w->acc_added[(size_t)p * ACC_CELLS + i];
            for (int i = 0; i < NRMW; i++)
                s[ACC_CELLS + i] += w->rmw[(size_t)p * NRMW + i];
            for (int i = 0; i < NMUTEX; i++)
                s[ACC_CELLS + NRMW + i] += w->lock_incr[(size_t)p * NMUTEX + i];
        }
    }
    armci_msg_lgop(sum, (int)n, "+");
    main_ops[OP_MSG]++;
    const long *s = sum + (size_t)me * per;
    for (int i = 0; i < ACC_CELLS; i++)
        if (acc_cells(me)[i] != s[i])
            mismatch("accumulate cell %d is %ld, the accumulates added %ld", i, acc_cells(me)[i],
                     s[i]);
    const long *r = s + ACC_CELLS;
    long fa = *rmw_cell(me, CELL_FA_LONG), swap = *rmw_cell(me, CELL_SWAP);
    int fai = *(int *)rmw_cell(me, CELL_FA_INT);
    if (fa != r[FA_LONG_N] || r[FA_LONG_SUM] != r[FA_LONG_N] * (r[FA_LONG_N] - 1) / 2)
        mismatch("fetch-and-add long: cell %ld after %ld adds, old values summing to %ld", fa,
                 r[FA_LONG_N], r[FA_LONG_SUM]);
    if (fai != r[FA_INT_N] || r[FA_INT_SUM] != r[FA_INT_N] * (r[FA_INT_N] - 1) / 2)
        mismatch("fetch-and-add int: cell %d after %ld adds, old values summing to %ld", fai,
                 r[FA_INT_N], r[FA_INT_SUM]);
    if (r[SWAP_OUT] + swap != r[SWAP_IN])
        mismatch("swap: %ld swapped in, %ld out and %ld left", r[SWAP_IN], r[SWAP_OUT], swap);
    for (int m = 0; m < NMUTEX; m++)
        if (*lock_cell(me, m) != s[ACC_CELLS + NRMW + m])
            mismatch("mutex %d's cell is %ld after %ld increments under the lock", m,
                     *lock_cell(me, m), s[ACC_CELLS + NRMW + m]);
    free(sum);
}

/* armci_msg collectives with results known in advance. */
static void check_collectives(int epoch)
{
    long lmax = me + 1, lmin = me + 1;
    armci_msg_lgop(&lmax, 1, "max");
    armci_msg_lgop(&lmin, 1, "min");
    if (lmax != nprocs || lmin != 1)
        mismatch("armci_msg_lgop max/min gave %ld/%ld, expected %d/1", lmax, lmin, nprocs);
    int isum = me, iprod = me % 2 ? 2 : 1;
    armci_msg_igop(&isum, 1, "+");
    armci_msg_igop(&iprod, 1, "*");
    if (isum != nprocs * (nprocs - 1) / 2 || iprod != 1 << (nprocs / 2))
        mismatch("armci_msg_igop +/* gave %d/%d", isum, iprod);
    double dabs = me % 2 ? -(double)me : (double)me;
    armci_msg_dgop(&dabs, 1, "absmax");
    if (dabs != nprocs - 1)
        mismatch("armci_msg_dgop absmax gave %g, expected %d", dabs, nprocs - 1);
    unsigned char msg[1000];
    int root = epoch % nprocs, len = 1 + epoch % (int)sizeof(msg);
    if (me == root)
        fill_pattern(msg, (size_t)len, (uint64_t)epoch);
    else
        memset(msg, 0, sizeof(msg));
    armci_msg_brdcst(msg, len, root);
    if (check_pattern(msg, (size_t)len, (uint64_t)epoch) >= 0)
        mismatch("armci_msg_brdcst of %d bytes from rank %d arrived wrong", len, root);
    armci_msg_barrier();
    main_ops[OP_MSG] += 7;
}

/* A fresh segment (its size varies a little), zeroed by its owner; shadows and counts zero. */
static void new_segment(int epoch)
{
    if (seg[me])
        ARMCI_Free(seg[me]);
    seg_bytes = layout_bytes() + 4096 * (size_t)(epoch % 3);
    ARMCI_Malloc(seg, (armci_size_t)seg_bytes);
    main_ops[OP_MALLOC]++;
    memset(seg[me], 0, seg_bytes);
    for (int t = 0; t < nthreads; t++) {
        struct worker *w = &workers[t];
        memset(w->shadow, 0, (size_t)nprocs * SLOT);
        memset(w->acc_added, 0, sizeof(long) * (size_t)nprocs * ACC_CELLS);
        memset(w->rmw, 0, sizeof(long) * (size_t)nprocs * NRMW);
        memset(w->lock_incr, 0, sizeof(long) * (size_t)nprocs * NMUTEX);
    }
    ARMCI_Barrier();
    main_ops[OP_BARRIER]++;
}

/* Memory of the largest process at one point of the run. */
struct mem_point {
    long rss_kb, shmem_kb, heap_kb; /* shmem: the part of VmRSS in shared memory */
};

static long max_over_ranks(long x)
{
    long m;
    MPI_Allreduce(&x, &m, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* Threads beyond the credits would deadlock on one remote mutex (see the top). */
static int thread_limit(void)
{
    const char *e = getenv("ARMCI_SERVER_CREDITS");
    int credits = e && atoi(e) > 0 ? atoi(e) : 32; /* the library's default */
    return credits - 1 < MAX_THREADS ? credits - 1 : MAX_THREADS;
}

static void start_workers(void)
{
    pthread_barrier_init(&epoch_start, NULL, (unsigned)nthreads + 1);
    pthread_barrier_init(&epoch_end, NULL, (unsigned)nthreads + 1);
    for (int t = 0; t < nthreads; t++) {
        struct worker *w = &workers[t];
        w->id = t;
        w->rng =
            0x9E3779B97F4A7C15ULL * (uint64_t)(me * MAX_THREADS + t + 1) ^ (uint64_t)time(NULL);
        w->shadow = malloc((size_t)nprocs * SLOT);
        w->plain = malloc(2 * SLOT);
        w->reg = ARMCI_Malloc_local(2 * SLOT);
        w->acc_added = malloc(sizeof(long) * (size_t)nprocs * ACC_CELLS);
        w->rmw = malloc(sizeof(long) * (size_t)nprocs * NRMW);
        w->lock_incr = malloc(sizeof(long) * (size_t)nprocs * NMUTEX);
        CHECK(w->shadow && w->plain && w->reg && w->acc_added && w->rmw && w->lock_incr,
              "out of memory");
        pthread_create(&w->thread, NULL, worker_main, w);
    }
}

static void stop_workers(void)
{
    stopping = 1;
    pthread_barrier_wait(&epoch_start);
    for (int t = 0; t < nthreads; t++) {
        struct worker *w = &workers[t];
        pthread_join(w->thread, NULL);
        free(w->shadow);
        free(w->plain);
        ARMCI_Free_local(w->reg);
        free(w->acc_added);
        free(w->rmw);
        free(w->lock_incr);
    }
}

static struct mem_point mem_now(void)
{
    return (struct mem_point){max_over_ranks(status_kb("VmRSS")),
                              max_over_ranks(status_kb("RssShmem")),
                              max_over_ranks(heap_in_use() / 1024)};
}

static void print_summary(double seconds, int epochs, struct mem_point mem[3])
{
    struct cm_stats st = cm_stats();
    long conns[2] = {st.closed, st.reopened}, conns_total[2];
    MPI_Reduce(conns, conns_total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    long ops[NCLASSES] = {0}, total[NCLASSES];
    for (int c = 0; c < NCLASSES; c++) {
        ops[c] = main_ops[c];
        for (int t = 0; t < nthreads; t++)
            ops[c] += workers[t].ops[c];
    }
    MPI_Reduce(ops, total, NCLASSES, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me != 0)
        return;
    printf("soak: %d processes x %d threads, %.0f s, %d epochs\n", nprocs, nthreads, seconds,
           epochs);
    printf("soak ops:");
    long all = 0;
    for (int c = 0; c < NCLASSES; c++) {
        printf(" %s=%ld", class_name[c], total[c]);
        all += total[c];
    }
    printf(" total=%ld\n", all);
    printf("soak VmRSS kB (largest process): start=%ld after-first-epoch=%ld end=%ld\n",
           mem[0].rss_kb, mem[1].rss_kb, mem[2].rss_kb);
    printf("soak RssShmem kB (largest process): start=%ld after-first-epoch=%ld end=%ld\n",
           mem[0].shmem_kb, mem[1].shmem_kb, mem[2].shmem_kb);
    printf("soak heap in use kB (largest process): start=%ld after-first-epoch=%ld end=%ld\n",
           mem[0].heap_kb, mem[1].heap_kb, mem[2].heap_kb);
    printf("soak connections (all processes): closed=%ld reopened=%ld\n", conns_total[0],
           conns_total[1]);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ARMCI_Init_thread(MPI_THREAD_MULTIPLE);
    me = armci_msg_me();
    nprocs = armci_msg_nproc();
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI gives thread level %d only", provided);
    CHECK(argc >= 2, "usage: soak SECONDS [THREADS [EPOCH_MS]]");
    double seconds = atof(argv[1]);
    nthreads = argc > 2 ? atoi(argv[2]) : 3;
    double epoch_s = (argc > 3 ? atoi(argv[3]) : 500) / 1e3;
    CHECK(nthreads >= 1 && nthreads <= thread_limit(),
          "THREADS must be 1 ... %d (one less than ARMCI_SERVER_CREDITS)", thread_limit());

    struct mem_point mem[3] = {mem_now()};
    seg = calloc((size_t)nprocs, sizeof(void *));
    ARMCI_Create_mutexes(NMUTEX);
    start_workers();
    double begin = now(), end = begin + seconds;
    int epoch = 0;
    for (int go = 1; go; epoch++) {
        new_segment(epoch);
        epoch_deadline = now() + epoch_s;
        pthread_barrier_wait(&epoch_start);
        pthread_barrier_wait(&epoch_end); /* the workers have fenced their last puts */
        MPI_Barrier(MPI_COMM_WORLD);
        check_slots_after_fence();
        ARMCI_Barrier();
        main_ops[OP_BARRIER]++;
        check_cells();
        check_collectives(epoch);
        if (epoch == 0)
            mem[1] = mem_now();
        go = now() < end;
        armci_msg_brdcst(&go, sizeof(go), 0); /* rank 0's clock decides for everyone */
        main_ops[OP_MSG]++;
    }
    stop_workers();
    ARMCI_Free(seg[me]);
    main_ops[OP_MALLOC]++;
    ARMCI_Destroy_mutexes();
    mem[2] = mem_now();
    print_summary(now() - begin, epoch, mem);
    long bad = atomic_load(&mismatches), all_bad;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("soak mismatches: %ld\n", all_bad);
    fflush(stdout);
    ARMCI_Finalize();
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
