/*
 * Memory stays flat over ARMCI_Malloc/ARMCI_Free cycles: every process
 * allocates a block of its own size (one rank of each node 0 bytes, every
 * fourth cycle; every process the same size, every eighth: a regular array,
 * whose index keeps no record, where the others keep a 16-byte record a
 * block once per node), puts a pattern into its successor's block, which the
 * successor checks, and everybody frees. After a warm-up of CYCLES/10,
 * CYCLES more must leave:
 *   - what ARMCI_Malloc keeps (memstat's segments, index, sync and groups)
 *     where it was, to the byte (connection records may still change: a
 *     table of the data server's grew by 128 B once, in the clean-clone CI);
 *   - the malloc heap in use within HEAP_BYTES_PER_CYCLE a cycle;
 *   - the process's private memory (RssAnon) within ANON_BYTES_PER_CYCLE a
 *     cycle, and its mappings (/proc/self/maps) as many as before: a block's
 *     shared-memory object left mapped would add one a cycle. Shared memory
 *     resident (RssShmem) is printed, not bounded: softib's fabric touches
 *     the pages of its tables as registrations come and go, up to their size
 *     (flat at about 4.9 MB after some 30,000 cycles here), which a real
 *     device does not have.
 * Usage: test_malloc_cycles [CYCLES]
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/memstat.h"
#include "core/topology.h"
#include "proc_memory.h"
#include "testutil.h"

#define HEAP_BYTES_PER_CYCLE 8
#define ANON_BYTES_PER_CYCLE 64

/* Lines of /proc/self/maps: the process's mappings. */
static long mappings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    long lines = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;)
        lines += ch == '\n';
    if (f)
        fclose(f);
    return lines;
}

static int me, n;

static bool regular_cycle(long cycle)
{
    return cycle % 8 == 5;
}

static size_t block_size(long cycle, int rank)
{
    /* The last rank of a node asks for nothing every fourth cycle (GA does, for empty
     * distributions): the segment has members without blocks. */
    if (cycle % 4 == 3 && topo_node_of(rank) != topo_node_of((rank + 1) % n))
        return 0;
    return 64 + (size_t)(((regular_cycle(cycle) ? 0 : rank * 977) + cycle * 131) % 4096);
}

/* The index the cycle's array added, over my node: nothing when regular, else a 16-byte run a
 * block (every process maps the array at one address: no address in it; the sizes differ from
 * one rank to the next: no run holds two) and one a gap between blocks. */
static void check_index(long cycle, long added)
{
    long node = 0, runs = 0;
    for (int p = 0, last = -1; p < n; p++) {
        if (!block_size(cycle, p))
            continue;
        runs += 1 + (last >= 0 && last != p - 1);
        last = p;
    }
    MPI_Allreduce(&added, &node, 1, MPI_LONG, MPI_SUM, topo.node_comm);
    long want = regular_cycle(cycle) ? 0 : 16 * runs;
    CHECK(node == want, "cycle %ld: the node counts %ld bytes of index, not %ld", cycle, node,
          want);
}

static void cycle_once(long cycle, void **ptrs, unsigned char *buf)
{
    size_t mine = block_size(cycle, me);
    long index0 = memstat_now(MEM_INDEX);
    ARMCI_Malloc(ptrs, (armci_size_t)mine);
    check_index(cycle, memstat_now(MEM_INDEX) - index0);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    size_t out = block_size(cycle, next); /* the successor's block, filled whole */
    if (out > 0) {
        fill_pattern(buf, out, (uint64_t)cycle * 65537 + (uint64_t)me);
        ARMCI_Put(buf, ptrs[next], (int)out, next);
    }
    ARMCI_AllFence();
    MPI_Barrier(MPI_COMM_WORLD);
    if (mine > 0) {
        long bad = check_pattern(ptrs[me], mine, (uint64_t)cycle * 65537 + (uint64_t)prev);
        CHECK(bad < 0, "cycle %ld: byte %ld of the block from rank %d differs", cycle, bad, prev);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ARMCI_Free(ptrs[me]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    n = armci_msg_nproc();
    long cycles = argc > 1 ? atol(argv[1]) : 10000;
    void **ptrs = malloc(sizeof(void *) * (size_t)n);
    unsigned char *buf = malloc(8192);

    long c = 0;
    for (; c < cycles / 10; c++)
        cycle_once(c, ptrs, buf);
    long kinds0[MEM_KINDS];
    for (int k = 0; k < MEM_KINDS; k++)
        kinds0[k] = memstat_now((enum mem_kind)k);
    long heap0 = heap_in_use(), rss0 = status_kb("VmRSS");
    long anon0 = status_kb("RssAnon"), shmem0 = status_kb("RssShmem"), maps0 = mappings();
    for (long end = c + cycles; c < end; c++)
        cycle_once(c, ptrs, buf);
    long heap1 = heap_in_use(), rss1 = status_kb("VmRSS");
    long anon1 = status_kb("RssAnon"), shmem1 = status_kb("RssShmem"), maps1 = mappings();

    double heap_per = (double)(heap1 - heap0) / (double)cycles;
    double anon_per = (double)(anon1 - anon0) * 1024.0 / (double)cycles;
    printf("rank %d: %ld cycles; heap %ld -> %ld bytes (%.2f per cycle), RssAnon %ld -> %ld kB "
           "(%.1f bytes per cycle), mappings %ld -> %ld; VmRSS %ld -> %ld kB, RssShmem %ld -> %ld "
           "kB\n",
           me, cycles, heap0, heap1, heap_per, anon0, anon1, anon_per, maps0, maps1, rss0, rss1,
           shmem0, shmem1);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's figures first */
    static const enum mem_kind kept[] = {MEM_SEGMENTS, MEM_INDEX, MEM_SYNC, MEM_GROUPS};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        CHECK(memstat_now(kept[i]) == kinds0[kept[i]], "%s: %ld bytes, %ld before the cycles",
              memstat_name(kept[i]), memstat_now(kept[i]), kinds0[kept[i]]);
    CHECK(heap_per <= HEAP_BYTES_PER_CYCLE, "heap grew %.2f bytes per cycle (bound %d)", heap_per,
          HEAP_BYTES_PER_CYCLE);
    CHECK(anon_per <= ANON_BYTES_PER_CYCLE, "RssAnon grew %.1f bytes per cycle (bound %d)",
          anon_per, ANON_BYTES_PER_CYCLE);
    CHECK(maps1 <= maps0 + 2, "%ld mappings, %ld before the cycles", maps1, maps0);
    free(buf);
    free(ptrs);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
