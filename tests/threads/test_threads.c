/*
 * Every ARMCI call from several threads at once (MPI_THREAD_MULTIPLE), with
 * byte-exact checks. Each mode starts T threads per process together and
 * checks the result against a reference:
 *
 *   ops       every operation class at once: contiguous, strided and vector
 *             put/get/acc, blocking, with own handles, aggregate and implicit
 *             handles (WaitAll waits for the calling thread's), Rmw; each
 *             thread owns a slice of every process's segment, accumulates
 *             and fetch-and-adds go to words everybody shares
 *   connect   all threads reach every other node for the first time at the
 *             same moment, each in another order: one connection per node
 *   mutex     all threads of all processes increment counters under ARMCI
 *             mutexes (same node and remote), two threads of a process
 *             contending for the same one
 *   queue     a queue of threads on one mutex of another node, longer than the
 *             connection's credits: thread 0 holds it until every other
 *             thread of the process has asked for it, then accumulates and
 *             unlocks (a lock waiting at the server must not keep what the
 *             unlock and the accumulate need to reach that server)
 *   fence     threads put and fence while others keep issuing, then tell the
 *             target by an MPI message: the target finds the fenced put in its
 *             own memory
 *   serialized  (MPI_THREAD_SERIALIZED) two threads take turns
 *   malloc    thread 0 allocates and frees arrays (ARMCI_Malloc, ARMCI_Free:
 *             each process's block index changes, kept once per node) and
 *             puts into and gets from each new one, while the other threads
 *             keep putting and getting through the long-lived array: their
 *             lookups race with the index being rebuilt
 *
 * Usage: test_threads MODE [THREADS]
 */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "odcm/cm.h"
#include "verbs/atomics.h"
#include "testutil.h"

#define MAX_THREADS 16
#define SLICE       (64 * 1024) /* bytes each thread owns in each process's segment */
#define ROUNDS      12

static int me, nprocs, nthreads;
static void **seg;    /* slices: [proc] -> nthreads * nprocs * SLICE bytes */
static void **shared; /* words everybody accumulates into: [proc] -> SHARED_WORDS longs */
static pthread_barrier_t start;
enum { SHARED_WORDS = 64, RMW_WORD = 0, ACC_WORDS = 32 };

/* The slice thread t of process p owns in every segment. */
static char *slice(int owner_proc, int p, int t)
{
    return (char *)seg[owner_proc] + ((size_t)p * nthreads + (size_t)t) * SLICE;
}

static uint64_t seed_for(int writer, int t, int target, int round, int what)
{
    return ((uint64_t)writer * 131 + (uint64_t)t) * 1000003 + (uint64_t)target * 10007 +
           (uint64_t)round * 101 + (uint64_t)what;
}

static uint64_t seed_of(int t, int target, int round, int what)
{
    return seed_for(me, t, target, round, what);
}

/* Contiguous, with a handle of its own and with the thread's implicit handle. */
static void contiguous(int t, int target, int round, unsigned char *out, unsigned char *in)
{
    size_t n = SLICE / 2;
    char *remote = slice(target, me, t);
    fill_pattern(out, n, seed_of(t, target, round, 1));
    if (round % 3 == 0) {
        ARMCI_Put(out, remote, (int)n, target);
    } else if (round % 3 == 1) {
        armci_hdl_t h;
        ARMCI_INIT_HANDLE(&h);
        ARMCI_NbPut(out, remote, (int)n, target, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_NbPut(out, remote, (int)n, target, NULL);
        ARMCI_WaitAll();
    }
    ARMCI_Fence(target);
    memset(in, 0, n);
    if (round % 2) {
        armci_hdl_t h;
        ARMCI_INIT_HANDLE(&h);
        ARMCI_NbGet(remote, in, (int)n, target, &h);
        ARMCI_Wait(&h);
    } else {
        ARMCI_Get(remote, in, (int)n, target);
    }
    long bad = check_pattern(in, n, seed_of(t, target, round, 1));
    CHECK(bad < 0, "thread %d: contiguous put/get to %d, round %d: byte %ld differs", t, target,
          round, bad);
}

/* A 2-D patch: rows of `row` bytes, `rows` of them, in the second half of the slice. */
static void strided(int t, int target, int round, unsigned char *out, unsigned char *in)
{
    int row = 24 + 8 * (round % 5), rows = 16 + round % 7, ld = 256;
    char *remote = slice(target, me, t) + SLICE / 2;
    int count[2] = {row, rows}, rstride[1] = {ld}, lstride[1] = {row};
    fill_pattern(out, (size_t)row * rows, seed_of(t, target, round, 2));
    armci_hdl_t agg;
    ARMCI_INIT_HANDLE(&agg);
    ARMCI_SET_AGGREGATE_HANDLE(&agg);
    ARMCI_NbPutS(out, lstride, remote, rstride, count, 1, target, &agg);
    ARMCI_Wait(&agg);
    ARMCI_UNSET_AGGREGATE_HANDLE(&agg);
    ARMCI_Fence(target);
    memset(in, 0, (size_t)row * rows);
    ARMCI_GetS(remote, rstride, in, lstride, count, 1, target);
    long bad = check_pattern(in, (size_t)row * rows, seed_of(t, target, round, 2));
    CHECK(bad < 0, "thread %d: strided %dx%d to %d, round %d: byte %ld differs", t, row, rows,
          target, round, bad);
}

/* A vector of 8-byte segments spread over the slice's second half. */
static void vector(int t, int target, int round, unsigned char *out, unsigned char *in)
{
    enum { K = 16 };
    void *src[K], *dst[K], *back[K];
    char *remote = slice(target, me, t) + SLICE / 2 + 8192;
    fill_pattern(out, K * 8, seed_of(t, target, round, 3));
    for (int i = 0; i < K; i++) {
        src[i] = out + i * 8;
        dst[i] = remote + (size_t)i * 40 + (size_t)(round % 4) * 8;
        back[i] = in + i * 8;
    }
    armci_giov_t put = {src, dst, 8, K}, get = {dst, back, 8, K};
    ARMCI_PutV(&put, 1, target);
    ARMCI_Fence(target);
    memset(in, 0, K * 8);
    ARMCI_GetV(&get, 1, target);
    long bad = check_pattern(in, K * 8, seed_of(t, target, round, 3));
    CHECK(bad < 0, "thread %d: vector to %d, round %d: byte %ld differs", t, target, round, bad);
}

/* Adds to the shared words of target: contiguous, strided and vector, plus one Rmw. */
static void accumulate(int t, int target, long *fetched, int *nfetched)
{
    long ones[ACC_WORDS];
    long two = 2, three = 3, one = 1;
    for (int i = 0; i < ACC_WORDS; i++)
        ones[i] = 1;
    long *words = (long *)shared[target];
    ARMCI_Acc(ARMCI_ACC_LNG, &one, ones, words + 1, (int)sizeof(long) * 8, target);
    int count[2] = {(int)sizeof(long), 8}, stride[1] = {(int)sizeof(long) * 2};
    ARMCI_AccS(ARMCI_ACC_LNG, &two, ones, stride, words + 9, stride, count, 1, target);
    void *src[4] = {ones, ones + 1, ones + 2, ones + 3};
    void *dst[4] = {words + 30, words + 31, words + 32, words + 33};
    armci_giov_t v = {src, dst, sizeof(long), 4};
    ARMCI_AccV(ARMCI_ACC_LNG, &three, &v, 1, target);
    long old = 0;
    ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, words + RMW_WORD, 1, target);
    fetched[(*nfetched)++] = old;
}

struct worker_arg {
    int t;
    long fetched[ROUNDS * 64];
    int nfetched;
};

static void *ops_worker(void *p)
{
    struct worker_arg *a = p;
    unsigned char *out = malloc(SLICE), *in = malloc(SLICE);
    CHECK(out && in, "out of memory");
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < nprocs; k++) {
            int target = (me + k + a->t) % nprocs;
            contiguous(a->t, target, round, out, in);
            strided(a->t, target, round, out, in);
            vector(a->t, target, round, out, in);
            accumulate(a->t, target, a->fetched, &a->nfetched);
        }
    }
    free(out);
    free(in);
    return NULL;
}

/* Totals every shared word must reach, and every fetch-and-add value must be taken once. */
static void check_ops(struct worker_arg *args)
{
    long adds = (long)nprocs * nthreads * ROUNDS; /* accumulates each target received */
    long *words = (long *)shared[me];
    for (int i = 1; i <= 8; i++)
        CHECK(words[i] == adds, "contiguous acc word %d is %ld, expected %ld", i, words[i], adds);
    for (int i = 0; i < 8; i++)
        CHECK(words[9 + 2 * i] == 2 * adds, "strided acc word %d is %ld, expected %ld", 9 + 2 * i,
              words[9 + 2 * i], 2 * adds);
    for (int i = 30; i < 34; i++)
        CHECK(words[i] == 3 * adds, "vector acc word %d is %ld, expected %ld", i, words[i],
              3 * adds);
    CHECK(words[RMW_WORD] == adds, "fetch-and-add word is %ld, expected %ld", words[RMW_WORD],
          adds);

    /* Every value 0..adds-1 of every target was handed to exactly one thread of the job. */
    long mine = 0;
    for (int t = 0; t < nthreads; t++)
        mine += args[t].nfetched;
    long *all_vals = malloc(sizeof(long) * (size_t)mine);
    long n = 0;
    for (int t = 0; t < nthreads; t++)
        for (int i = 0; i < args[t].nfetched; i++)
            all_vals[n++] = args[t].fetched[i];
    long total = n;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == adds * nprocs, "%ld fetch-and-adds, expected %ld", total, adds * nprocs);
    /* Per target the values are a permutation: their sum is 0 + 1 + ... + adds-1. */
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += all_vals[i];
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == nprocs * adds * (adds - 1) / 2, "fetch-and-add values sum to %ld, expected %ld",
          sum, nprocs * adds * (adds - 1) / 2);
    free(all_vals);
}

/* All threads touch every other node at once, each starting elsewhere. */
static void *connect_worker(void *p)
{
    struct worker_arg *a = p;
    long value = 0;
    pthread_barrier_wait(&start);
    for (int k = 0; k < nprocs - 1; k++) {
        int target = (me + 1 + (k + a->t) % (nprocs - 1)) % nprocs;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &value, (long *)shared[target] + RMW_WORD, 1, target);
    }
    return NULL;
}

/* The nodes connect_worker's Rmw reach by a connection: the other nodes, and the own one
 * when every long Rmw goes through the device (a loopback connection: verbs/atomics.h) and
 * another process shares this node. */
static int other_nodes(void)
{
    int n = 0;
    bool own = false;
    int *seen = calloc((size_t)nprocs, sizeof(int));
    for (int p = 0; p < nprocs; p++) {
        int node = armci_domain_id(ARMCI_DOMAIN_SMP, p);
        if (!ARMCI_Same_node(p) && !seen[node]++)
            n++;
        own |= p != me && ARMCI_Same_node(p);
    }
    free(seen);
    return n + (own && rmw_route_loopback());
}

/* Counters under mutexes: mutex m of process m % nprocs guards counter m. */
enum { MUTEXES = 4, LOCK_ROUNDS = 25 };

static void *mutex_worker(void *p)
{
    struct worker_arg *a = p;
    pthread_barrier_wait(&start);
    for (int r = 0; r < LOCK_ROUNDS; r++) {
        for (int m = 0; m < MUTEXES; m++) {
            int owner = (m + a->t / 2) % nprocs; /* threads 2k and 2k+1 contend */
            long *counter = (long *)shared[owner] + 40 + m;
            ARMCI_Lock(m, owner);
            long v = 0;
            ARMCI_Get(counter, &v, sizeof(v), owner);
            v++;
            ARMCI_Put(&v, counter, sizeof(v), owner);
            ARMCI_Fence(owner);
            ARMCI_Unlock(m, owner);
        }
    }
    return NULL;
}

/*
 * A queue on one mutex of another node. Mutex 0 of the first rank of the next node; both
 * processes of a node queue there. Thread 0 takes it first, waits until every other thread of
 * its process is about to ask for it and gives them time to be queued at the server, then
 * accumulates under it and unlocks. Every holder counts itself twice: a get/put increment and
 * an accumulate (a data-server message, like the unlock).
 */
enum { QUEUE_ROUNDS = 3, QUEUE_WORD = 44, QUEUE_ACC_WORD = 45 };
static pthread_mutex_t asked_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t asked_cv = PTHREAD_COND_INITIALIZER;
static int held_round = -1, asked; /* thread 0 holds the mutex in held_round; asked: others */

static int queue_owner(void)
{
    int node = armci_domain_id(ARMCI_DOMAIN_SMP, me);
    int nodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    return armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, (node + 1) % nodes, 0);
}

static void queue_increment(int owner)
{
    long *counter = (long *)shared[owner] + QUEUE_WORD;
    long v = 0, one = 1;
    ARMCI_Get(counter, &v, sizeof(v), owner);
    v++;
    ARMCI_Put(&v, counter, sizeof(v), owner);
    ARMCI_Acc(ARMCI_ACC_LNG, &one, &one, (long *)shared[owner] + QUEUE_ACC_WORD, sizeof(long),
              owner);
    ARMCI_Fence(owner);
}

static void *queue_worker(void *p)
{
    struct worker_arg *a = p;
    int owner = queue_owner();
    for (int r = 0; r < QUEUE_ROUNDS; r++) {
        pthread_barrier_wait(&start);
        pthread_mutex_lock(&asked_mu);
        if (a->t == 0) {
            pthread_mutex_unlock(&asked_mu);
            ARMCI_Lock(0, owner);
            pthread_mutex_lock(&asked_mu);
            held_round = r;
            asked = 0;
            pthread_cond_broadcast(&asked_cv);
            while (asked < nthreads - 1)
                pthread_cond_wait(&asked_cv, &asked_mu);
            pthread_mutex_unlock(&asked_mu);
            /* They are asking now: let their requests reach the server's queue. */
            usleep(300 * 1000);
        } else {
            while (held_round != r)
                pthread_cond_wait(&asked_cv, &asked_mu);
            asked++;
            pthread_cond_broadcast(&asked_cv);
            pthread_mutex_unlock(&asked_mu);
            ARMCI_Lock(0, owner);
        }
        queue_increment(owner);
        ARMCI_Unlock(0, owner);
    }
    return NULL;
}

/*
 * Fences seen from the target. In step k of a round thread t puts its slice to process
 * me + k and fences it (Fence(target) or, in odd threads, AllFence while the others keep
 * issuing), then tells the target by an MPI message; thread t of the target, told so by
 * process me - k, finds the slice in its own memory, then answers, so that the writer's next
 * round does not overwrite it before. Under deferred completions (SOFTIB_DEFERRED=1) a write
 * runs only when the writer polls: without the fence the message arrives first.
 */
enum { FENCE_TOLD = 100, FENCE_CHECKED = 200 };

/*
 * Sends an int to `to` and receives one from `from` (tag `tag`). The MPI calls of all threads
 * go one at a time and never block inside MPI: a blocking call's wait object lives on its
 * caller's stack, where another thread's progress may still touch it after the call returned
 * (ThreadSanitizer reports that inside Open MPI).
 */
static pthread_mutex_t mpi_mu = PTHREAD_MUTEX_INITIALIZER;

static void exchange(int to, int from, int tag)
{
    int out = tag, in;
    MPI_Request rq[2];
    pthread_mutex_lock(&mpi_mu);
    MPI_Isend(&out, 1, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&in, 1, MPI_INT, from, tag, MPI_COMM_WORLD, &rq[1]);
    pthread_mutex_unlock(&mpi_mu);
    for (int done = 0; !done;) {
        pthread_mutex_lock(&mpi_mu);
        MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE);
        pthread_mutex_unlock(&mpi_mu);
        if (!done)
            sched_yield();
    }
}

static void *fence_worker(void *p)
{
    struct worker_arg *a = p;
    unsigned char *out = malloc(SLICE);
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 1; k < nprocs; k++) {
            int target = (me + k) % nprocs, source = (me + nprocs - k) % nprocs;
            fill_pattern(out, SLICE, seed_of(a->t, target, round, 4));
            armci_hdl_t h;
            ARMCI_INIT_HANDLE(&h);
            ARMCI_NbPut(out, slice(target, me, a->t), SLICE, target, &h);
            if (a->t % 2)
                ARMCI_AllFence();
            else
                ARMCI_Fence(target);
            exchange(target, source, FENCE_TOLD + a->t);
            long bad = check_pattern((unsigned char *)slice(me, source, a->t), SLICE,
                                     seed_for(source, a->t, me, round, 4));
            CHECK(bad < 0,
                  "thread %d: rank %d fenced its put of round %d and told us, but byte %ld of it "
                  "is not here",
                  a->t, source, round, bad);
            exchange(source, target, FENCE_CHECKED + a->t);
            ARMCI_Wait(&h);
        }
    }
    free(out);
    return NULL;
}

#define MALLOC_CYCLES 24
static int malloc_done;

/* Thread 0: cycles of ARMCI_Malloc, a put to the next process and a get back, ARMCI_Free
 * (collective: one thread a process makes them); the others: contiguous put/get meanwhile. */
static void *malloc_worker(void *p)
{
    struct worker_arg *a = p;
    unsigned char *out = malloc(SLICE), *in = malloc(SLICE);
    CHECK(out && in, "out of memory");
    pthread_barrier_wait(&start);
    if (a->t > 0) {
        for (int round = 0; !__atomic_load_n(&malloc_done, __ATOMIC_ACQUIRE); round++)
            contiguous(a->t, (me + round + a->t) % nprocs, round % ROUNDS, out, in);
    } else {
        void **ptrs = malloc(sizeof(void *) * (size_t)nprocs);
        for (int c = 0; c < MALLOC_CYCLES; c++) {
            size_t mine = 64 + (size_t)((me * 977 + c * 131) % 4096);
            ARMCI_Malloc(ptrs, (armci_size_t)mine);
            int next = (me + 1) % nprocs;
            size_t theirs = 64 + (size_t)((next * 977 + c * 131) % 4096);
            fill_pattern(out, theirs, seed_of(0, next, c, 7));
            ARMCI_Put(out, ptrs[next], (int)theirs, next);
            ARMCI_Get(ptrs[next], in, (int)theirs, next);
            long bad = check_pattern(in, theirs, seed_of(0, next, c, 7));
            CHECK(bad < 0, "cycle %d: put/get to %d's new block: byte %ld differs", c, next, bad);
            ARMCI_Barrier();
            int prev = (me + nprocs - 1) % nprocs;
            bad = check_pattern(ptrs[me], mine, seed_for(prev, 0, me, c, 7));
            CHECK(bad < 0, "cycle %d: my new block from %d: byte %ld differs", c, prev, bad);
            ARMCI_Free(ptrs[me]);
        }
        free(ptrs);
        __atomic_store_n(&malloc_done, 1, __ATOMIC_RELEASE);
    }
    free(out);
    free(in);
    return NULL;
}

static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

static void *serialized_worker(void *p)
{
    struct worker_arg *a = p;
    unsigned char *out = malloc(SLICE), *in = malloc(SLICE);
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS; round++) {
        int target = (me + 1 + round) % nprocs;
        pthread_mutex_lock(&turn);
        contiguous(a->t, target, round, out, in);
        pthread_mutex_unlock(&turn);
    }
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK(argc >= 2, "usage: test_threads MODE [THREADS]");
    const char *mode = argv[1];
    nthreads = argc > 2 ? atoi(argv[2]) : 3;
    CHECK(nthreads >= 1 && nthreads <= MAX_THREADS, "1 to %d threads", MAX_THREADS);
    bool serialized = !strcmp(mode, "serialized");
    int wanted = serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE, provided;
    MPI_Init_thread(&argc, &argv, wanted, &provided);
    CHECK(provided >= wanted, "MPI granted thread level %d, not %d", provided, wanted);
    ARMCI_Init_thread(wanted);
    me = armci_msg_me();
    nprocs = armci_msg_nproc();

    seg = malloc(sizeof(void *) * (size_t)nprocs);
    shared = malloc(sizeof(void *) * (size_t)nprocs);
    ARMCI_Malloc(seg, (armci_size_t)nthreads * nprocs * SLICE);
    ARMCI_Malloc(shared, SHARED_WORDS * sizeof(long));
    memset(shared[me], 0, SHARED_WORDS * sizeof(long));
    ARMCI_Create_mutexes(MUTEXES);
    ARMCI_Barrier();

    void *(*fn)(void *) = !strcmp(mode, "ops")       ? ops_worker
                          : !strcmp(mode, "connect") ? connect_worker
                          : !strcmp(mode, "mutex")   ? mutex_worker
                          : !strcmp(mode, "queue")   ? queue_worker
                          : !strcmp(mode, "fence")   ? fence_worker
                          : !strcmp(mode, "malloc")  ? malloc_worker
                          : serialized               ? serialized_worker
                                                     : NULL;
    CHECK(fn, "unknown mode %s", mode);
    struct worker_arg *args = calloc((size_t)nthreads, sizeof(*args));
    pthread_t tid[MAX_THREADS];
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++) {
        args[t].t = t;
        CHECK(pthread_create(&tid[t], NULL, fn, &args[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    ARMCI_Barrier();

    if (fn == ops_worker)
        check_ops(args);
    if (fn == connect_worker) {
        int nodes = other_nodes();
        const char *capped = getenv("ARMCI_MAX_CONNECTIONS");
        int cap = capped ? atoi(capped) : 0;
        if (cap > 0 && cap < nodes) /* under a cap: at most that many, all others closed */
            CHECK(cm_conn_count() <= cap && cm_stats().closed > 0,
                  "%d connections after the race (%ld closed), cap %d", cm_conn_count(),
                  cm_stats().closed, cap);
        else
            CHECK(cm_conn_count() == nodes, "%d connections after the race, expected %d",
                  cm_conn_count(), nodes);
        long total = ((long *)shared[me])[RMW_WORD];
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        long expect = (long)nprocs * nthreads * (nprocs - 1);
        CHECK(total == expect, "%ld fetch-and-adds arrived, expected %ld", total, expect);
    }
    if (fn == mutex_worker) {
        long got = 0;
        for (int m = 0; m < MUTEXES; m++)
            got += ((long *)shared[me])[40 + m];
        long total = got;
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        long expect = (long)nprocs * nthreads * LOCK_ROUNDS * MUTEXES;
        CHECK(total == expect, "counters under mutexes sum to %ld, expected %ld", total, expect);
    }
    if (fn == queue_worker) {
        /* Each word is here only at the first rank of a node; the others' stay 0. */
        long got[2] = {((long *)shared[me])[QUEUE_WORD], ((long *)shared[me])[QUEUE_ACC_WORD]};
        MPI_Allreduce(MPI_IN_PLACE, got, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        long expect = (long)nprocs * nthreads * QUEUE_ROUNDS;
        CHECK(got[0] == expect && got[1] == expect,
              "increments under the queued mutex: %ld by get/put and %ld by accumulate, expected "
              "%ld each",
              got[0], got[1], expect);
    }
    if (fn == fence_worker) {
        /* Every writer's last round is here, whole. */
        for (int p = 0; p < nprocs; p++)
            for (int t = 0; t < nthreads && p != me; t++) {
                long bad = check_pattern((unsigned char *)slice(me, p, t), SLICE,
                                         seed_for(p, t, me, ROUNDS - 1, 4));
                CHECK(bad < 0, "slice of rank %d thread %d: byte %ld differs", p, t, bad);
            }
    }

    TEST_DONE();
    free(args);
    ARMCI_Destroy_mutexes();
    ARMCI_Free(shared[me]);
    ARMCI_Free(seg[me]);
    free(seg);
    free(shared);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
