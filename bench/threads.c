/*
 * What thread safety costs and what threads buy, from rank 0 to the last
 * rank:
 *   - one thread: 8 B and 1 MiB put/get/acc, latency and bandwidth, in a
 *     job initialised with MPI_THREAD_SINGLE or MPI_THREAD_MULTIPLE (the
 *     level is the first argument: run the program once with each);
 *   - message rate: 1, 2 and 4 threads (MULTIPLE only) each issuing 8 B
 *     puts, gets and accumulates, in operations per second for the process.
 * Every loop ends with ARMCI_AllFence inside the timing.
 *
 * Output CSV: impl,layout,level,threads,op,bytes,iterations,usec_per_op,ops_per_s,MB_per_s
 * Usage: bench_threads single|multiple [LAYOUT_LABEL]
 */
#include <armci.h>
#include <mpi.h>

#include "bench_csv.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { OP_PUT, OP_GET, OP_ACC };
static const char *op_name[] = {"put", "get", "acc"};

static void **seg;
static int target;
static pthread_barrier_t start;

struct job {
    enum op op;
    size_t bytes;
    int iters;
    int slot; /* which slice of the target's segment this thread uses */
    void *local;
    double began, ended;
};

static void run_ops(const struct job *j)
{
    double one = 1.0;
    char *remote = (char *)seg[target] + (size_t)j->slot * j->bytes;
    for (int i = 0; i < j->iters; i++) {
        switch (j->op) {
        case OP_PUT:
            ARMCI_Put(j->local, remote, (int)j->bytes, target);
            break;
        case OP_GET:
            ARMCI_Get(remote, j->local, (int)j->bytes, target);
            break;
        case OP_ACC:
            ARMCI_Acc(ARMCI_ACC_DBL, &one, j->local, remote, (int)j->bytes, target);
            break;
        }
    }
}

static void *thread_main(void *arg)
{
    struct job *j = arg;
    pthread_barrier_wait(&start);
    j->began = MPI_Wtime();
    run_ops(j);
    ARMCI_AllFence();
    j->ended = MPI_Wtime();
    return NULL;
}

/* Seconds from the first thread's start to the last one's end, fences included. */
static double timed(struct job *jobs, int nthreads)
{
    pthread_t tid[8];
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&tid[t], NULL, thread_main, &jobs[t]);
    double began = 1e300, ended = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tid[t], NULL);
        began = jobs[t].began < began ? jobs[t].began : began;
        ended = jobs[t].ended > ended ? jobs[t].ended : ended;
    }
    pthread_barrier_destroy(&start);
    return ended - began;
}

static void report(const char *layout, const char *level, int nthreads, enum op op, size_t bytes,
                   int iters, double seconds)
{
    double ops = (double)iters * nthreads;
    fprintf(bench_csv(), "odcm,%s,%s,%d,%s,%zu,%d,%.3f,%.0f,%.1f\n", layout, level, nthreads,
            op_name[op], bytes, iters, seconds / iters * 1e6, ops / seconds,
            ops * (double)bytes / seconds / 1e6);
    fflush(bench_csv());
}

int main(int argc, char **argv)
{
    const char *level = argc > 1 ? argv[1] : "single";
    int wanted = strcmp(level, "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    int provided;
    MPI_Init_thread(&argc, &argv, wanted, &provided);
    ARMCI_Init_thread(wanted);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    target = n - 1;
    const char *layout = argc > 2 ? argv[2] : ARMCI_Same_node(target) ? "same-node" : "cross-node";
    const size_t big = 1u << 20;
    seg = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(seg, (armci_size_t)(4 * big));
    void *local[4];
    for (int t = 0; t < 4; t++) {
        local[t] = ARMCI_Malloc_local((armci_size_t)big);
        memset(local[t], 1, big);
    }
    ARMCI_Barrier();

    if (me == 0)
        fprintf(bench_csv(),
                "impl,layout,level,threads,op,bytes,iterations,usec_per_op,ops_per_s,MB_per_s\n");
    /* One thread, the calling one: the cost of the level on the fast path. */
    for (int op = OP_PUT; op <= OP_ACC; op++) {
        for (size_t bytes = 8; bytes <= big; bytes = bytes == 8 ? big : 2 * big) {
            int iters = bytes == 8 ? 20000 : 200;
            if (me == 0) {
                struct job j = {.op = op, .bytes = bytes, .iters = iters / 10, .local = local[0]};
                run_ops(&j); /* warm up */
                ARMCI_AllFence();
                j.iters = iters;
                double t0 = MPI_Wtime();
                run_ops(&j);
                ARMCI_AllFence();
                report(layout, level, 1, op, bytes, iters, MPI_Wtime() - t0);
            }
            ARMCI_Barrier();
        }
    }
    /* Several threads at once: only where the level allows it. */
    for (int nthreads = 1; wanted == MPI_THREAD_MULTIPLE && nthreads <= 4; nthreads *= 2) {
        for (int op = OP_PUT; op <= OP_ACC; op++) {
            if (me == 0) {
                struct job jobs[4];
                int iters = 20000 / nthreads;
                for (int t = 0; t < nthreads; t++)
                    jobs[t] = (struct job){
                        .op = op, .bytes = 8, .iters = iters, .slot = t, .local = local[t]};
                double seconds = timed(jobs, nthreads);
                report(layout, "multiple-rate", nthreads, op, 8, iters, seconds);
            }
            ARMCI_Barrier();
        }
    }

    for (int t = 0; t < 4; t++)
        ARMCI_Free_local(local[t]);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
