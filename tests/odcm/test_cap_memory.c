/*
 * Memory stays flat while a cap on connections (ARMCI_MAX_CONNECTIONS)
 * closes and reopens connections all along: each process talks to one other
 * node after another, so under a cap below the number of other nodes every
 * step closes a connection and reopens another (client side here, and the
 * data server's side at the target).
 * Checked, per process, after a warm-up of CYCLES/10 steps and again after
 * CYCLES more (amortised over thousands of reopens, so a page here and there
 * is noise, and nothing is timed):
 *   - the malloc heap in use (mallinfo2: uordblks + hblkhd) grew by at most
 *     HEAP_BYTES_PER_REOPEN per connection reopened;
 *   - VmRSS grew by at most RSS_BYTES_PER_REOPEN per connection reopened;
 *   - every put arrived (read back byte for byte) and every fetch-and-add
 *     counted (the owners check their counters at the end);
 *   - connections were reopened at all (else the test would check nothing).
 * The registered pools grow with the clients connected at once, up to their
 * bounds (docs/SCALING.md), and a server sees one more at a time now and
 * then while an old connection closes: what they grew (memstat's counts) is
 * left out of both figures, and printed.
 * Usage: test_cap_memory CYCLES   (ARMCI_MAX_CONNECTIONS set in the environment)
 */
#include <malloc.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/memstat.h"
#include "odcm/cm.h"
#include "proc_memory.h"
#include "testutil.h"

#define SLICE 256 /* bytes each rank owns at each rank */
/* Bounds per connection reopened. A reopen used to cost some 700 bytes of heap
 * (softib kept every destroyed QP) and 1.4 KiB of VmRSS (softib's shared QP
 * table walked through); now the heap in use stays within a few kB over the
 * run. VmRSS moves also when malloc's arenas settle, by up to 2 MB once:
 * over 10,000 reopens that is 200 bytes each. */
#define HEAP_BYTES_PER_REOPEN 32
#define RSS_BYTES_PER_REOPEN  256

static int me, n, nodes;

/* Bytes in the registered pools now (they grow with use, within bounds). */
static long registered_pools(void)
{
    long bytes = 0;
    for (int k = MEM_FIRST_BUFFER; k < MEM_KINDS; k++)
        bytes += memstat_now((enum mem_kind)k);
    return bytes;
}
static void **seg, **counters;

/* The k-th step's target: a rank on another node, the nodes in turn. */
static int target_of(long step)
{
    int my_node = armci_domain_my_id(ARMCI_DOMAIN_SMP);
    int node = (my_node + 1 + (int)(step % (nodes - 1))) % nodes;
    int count = armci_domain_nprocs(ARMCI_DOMAIN_SMP, node);
    return armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, node, (int)(step / (nodes - 1)) % count);
}

static uint64_t seed_of(int writer, long step)
{
    return (uint64_t)writer * 7919 + (uint64_t)step * 13 + 1;
}

/* Steps from..to-1: a put, its read-back and a fetch-and-add at each target. */
static void run_steps(long from, long to, long *added)
{
    unsigned char out[SLICE], in[SLICE];
    for (long step = from; step < to; step++) {
        int target = target_of(step);
        char *remote = (char *)seg[target] + (size_t)me * SLICE;
        fill_pattern(out, SLICE, seed_of(me, step));
        ARMCI_Put(out, remote, SLICE, target);
        ARMCI_Fence(target);
        memset(in, 0, SLICE);
        ARMCI_Get(remote, in, SLICE, target);
        long bad = check_pattern(in, SLICE, seed_of(me, step));
        CHECK(bad < 0, "step %ld, target %d: byte %ld differs", step, target, bad);
        long old;
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, counters[target], 1, target);
        added[target]++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    n = armci_msg_nproc();
    nodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    long cycles = argc > 1 ? atol(argv[1]) : 10000;
    const char *c = getenv("ARMCI_MAX_CONNECTIONS");
    int cap = c ? atoi(c) : 0;
    CHECK(cap > 0 && nodes - 1 > cap, "needs a cap (%d) below the other nodes (%d)", cap,
          nodes - 1);

    seg = malloc(sizeof(void *) * (size_t)n);
    counters = malloc(sizeof(void *) * (size_t)n);
    long *added = calloc((size_t)n, sizeof(long));
    ARMCI_Malloc(seg, (armci_size_t)n * SLICE);
    ARMCI_Malloc(counters, sizeof(long));
    memset(seg[me], 0, (size_t)n * SLICE);
    *(long *)counters[me] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Warm-up: pools, tables and the allocator's free lists reach their size. */
    long warmup = cycles / 10;
    run_steps(0, warmup, added);
    long heap0 = heap_in_use(), rss0 = status_kb("VmRSS"), reopened0 = cm_stats().reopened;
    long pools0 = registered_pools();
    long anon0 = status_kb("RssAnon"), shmem0 = status_kb("RssShmem");
    run_steps(warmup, warmup + cycles, added);
    long heap1 = heap_in_use(), rss1 = status_kb("VmRSS"), reopened1 = cm_stats().reopened;
    long pools = registered_pools() - pools0;
    long anon1 = status_kb("RssAnon"), shmem1 = status_kb("RssShmem");

    long reopens = reopened1 - reopened0;
    CHECK(reopens >= cycles / 2, "only %ld connections reopened in %ld steps", reopens, cycles);
    double heap_per = (double)(heap1 - heap0 - pools) / (double)reopens;
    double rss_per = ((double)(rss1 - rss0) * 1024.0 - (double)pools) / (double)reopens;
    printf("rank %d: %ld reopens; heap %ld -> %ld bytes (%.1f per reopen), VmRSS %ld -> %ld kB "
           "(%.1f bytes per reopen; RssAnon %ld -> %ld, RssShmem %ld -> %ld); registered pools "
           "grew %ld bytes (left out)\n",
           me, reopens, heap0, heap1, heap_per, rss0, rss1, rss_per, anon0, anon1, shmem0, shmem1,
           pools);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's figures first */
    CHECK(heap_per <= HEAP_BYTES_PER_REOPEN, "heap grew %.1f bytes per reopen (bound %d)", heap_per,
          HEAP_BYTES_PER_REOPEN);
    CHECK(rss_per <= RSS_BYTES_PER_REOPEN, "VmRSS grew %.1f bytes per reopen (bound %d)", rss_per,
          RSS_BYTES_PER_REOPEN);

    /* Every fetch-and-add arrived: the owners count them. */
    ARMCI_AllFence();
    long *expected = calloc((size_t)n, sizeof(long));
    MPI_Allreduce(added, expected, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(*(long *)counters[me] == expected[me], "counter %ld, expected %ld", *(long *)counters[me],
          expected[me]);

    TEST_DONE();
    free(expected);
    free(added);
    ARMCI_Free(counters[me]);
    ARMCI_Free(seg[me]);
    free(seg);
    free(counters);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
