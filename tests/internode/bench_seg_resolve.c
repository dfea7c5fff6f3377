/*
 * Cost of seg_resolve, the address -> block lookup every put, get and
 * accumulate makes: with ARRAYS arrays allocated, rank 0 resolves
 * addresses inside the blocks of other processes,
 *   hit:  always the same block (the per-thread cache answers);
 *   miss: cycling over more blocks than the cache holds (the index answers),
 * each the best of 5 rounds;
 * and checks along the way that every lookup gives a consistent answer.
 * Usage: bench_seg_resolve [ARRAYS [LOOKUPS [blocked]]]; prints one line per case.
 *   blocked: the first half of the processes ask 64 B more, as a block distribution
 *            (irregular arrays: the index keeps runs) instead of the same bytes (regular)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/segment.h"
#include "armci.h"
#include "testutil.h"

#define BLOCK 4096

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Resolves `lookups` addresses, cycling over `npairs` (array, process) pairs. */
static double run(void ***ptrs, const int *arr, const int *proc, int npairs, long lookups)
{
    struct target t;
    uint64_t sum = 0;
    double t0 = now();
    for (long i = 0; i < lookups; i++) {
        int k = (int)(i % npairs);
        char *p = (char *)ptrs[arr[k]][proc[k]] + (i & (BLOCK / 2 - 1));
        seg_resolve("bench", "addr", proc[k], p, 8, &t);
        sum += t.server_addr + (uintptr_t)t.local;
    }
    double dt = now() - t0;
    if (sum == 42)
        printf("(unlikely)\n");
    return dt / (double)lookups * 1e9;
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int arrays = argc > 1 ? atoi(argv[1]) : 20;
    long lookups = argc > 2 ? atol(argv[2]) : 2000000;
    int blocked = argc > 3 && strcmp(argv[3], "blocked") == 0;

    void ***ptrs = malloc(sizeof(*ptrs) * (size_t)arrays);
    for (int a = 0; a < arrays; a++) {
        ptrs[a] = malloc(sizeof(void *) * (size_t)n);
        ARMCI_Malloc(ptrs[a], BLOCK + (blocked && me < n / 2 ? 64 : 0));
    }

    if (me == 0 && n > 1) {
        /* Consistency: the same block gives the same server block, offsets carry over. */
        for (int a = 0; a < arrays; a++)
            for (int p = 0; p < n; p++) {
                struct target t0, t1;
                seg_resolve("bench", "addr", p, ptrs[a][p], 1, &t0);
                seg_resolve("bench", "addr", p, (char *)ptrs[a][p] + 100, 1, &t1);
                CHECK(t0.proc == p && t1.node == t0.node, "target of process %d", p);
                /* Each array's block is its own: same-node ones where ptr_arr says, the
                 * others at server addresses no other array's block of p has, and in a
                 * registration of their own (the arrays' objects may lie alike in every
                 * address space: a block of the wrong array can look right by its address). */
                for (int b = 0; b < a && !t0.local; b++) {
                    struct target tb;
                    seg_resolve("bench", "addr", p, ptrs[b][p], 1, &tb);
                    CHECK(tb.server_addr != t0.server_addr && tb.rkey != t0.rkey,
                          "arrays %d and %d of process %d resolve to one server block", b, a, p);
                }
                if (t0.local)
                    CHECK(t0.local == ptrs[a][p] && (char *)t1.local == (char *)t0.local + 100,
                          "local address");
                else
                    CHECK(t1.server_addr == t0.server_addr + 100 && t1.rkey == t0.rkey &&
                              t0.server_addr,
                          "server address of array %d process %d", a, p);
            }

        enum { PAIRS = 16 };
        int arr[PAIRS], proc[PAIRS];
        for (int k = 0; k < PAIRS; k++) {
            arr[k] = (k * 7) % arrays;
            proc[k] = n - 1 - (k % (n > 1 ? n - 1 : 1));
        }
        /* The best of several rounds: the machine may be shared. */
        run(ptrs, arr, proc, 1, lookups / 10); /* warm-up */
        double hit = 1e30, miss = 1e30;
        for (int round = 0; round < 5; round++) {
            double h = run(ptrs, arr, proc, 1, lookups / 5);
            double m = run(ptrs, arr, proc, PAIRS, lookups / 5);
            hit = h < hit ? h : hit;
            miss = m < miss ? m : miss;
        }
        printf("seg_resolve procs=%d arrays=%d%s hit_ns=%.1f miss_ns=%.1f\n", n, arrays,
               blocked ? " blocked" : "", hit, miss);
    }

    ARMCI_Barrier();
    for (int a = 0; a < arrays; a++) {
        ARMCI_Free(ptrs[a][me]);
        free(ptrs[a]);
    }
    free(ptrs);
    if (me == 0)
        printf("PASS\n");
    ARMCI_Finalize();
    return 0;
}
