/*
 * Registered pools give back what a burst took once the process is idle
 * (docs/SCALING.md, "Registered buffers"). Every process sends a burst to
 * its successor on another node, everything in flight at once:
 *   - BURST puts of 64 KiB from plain malloc'd memory, each copied through
 *     a bounce buffer;
 *   - BURST puts of SMALL bytes from plain malloc'd memory, each copied
 *     through a small buffer;
 * then fences; then reads it back with BURST strided gets of rows the
 * successor's data server packs into its out buffers
 * (ARMCI_STRIDED_THRESHOLD above the rows). All three pools grew past their
 * first chunk. Idle, with an all-fence every quarter second, all three are
 * back at their first chunk (what memstat counts now, to the byte), in about
 * 2 s unloaded (printed; IDLE_SECONDS_MAX only bounds a pool that never
 * trims, far above it: beside other work a process's fences come late); the
 * data arrived byte for byte. A
 * second burst grows them again, its data arrive too, and so for ROUNDS.
 * Usage: test_pool_trim [rounds]
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/memstat.h"
#include "core/topology.h"
#include "testutil.h"

#define BURST            16
#define LARGE            65536
#define SMALL            2048
#define IDLE_SECONDS_MAX 20.0
#define ROW              64

static int me, n;

/* The pattern `writer` puts in `round`. */
static uint64_t seed_of(int writer, int round)
{
    return (uint64_t)writer * 1000 + (uint64_t)round + 1;
}

/* BURST large and BURST small puts into next's block, all in flight, then waited for. */
static void burst(void **blocks, unsigned char *src, int next)
{
    armci_hdl_t h[2 * BURST];
    for (int k = 0; k < 2 * BURST; k++)
        ARMCI_INIT_HANDLE(&h[k]);
    for (int k = 0; k < BURST; k++) {
        size_t off = (size_t)k * LARGE;
        ARMCI_NbPut(src + off, (char *)blocks[next] + off, LARGE, next, &h[k]);
    }
    size_t small_base = (size_t)BURST * LARGE;
    for (int k = 0; k < BURST; k++) {
        size_t off = small_base + (size_t)k * SMALL;
        ARMCI_NbPut(src + off, (char *)blocks[next] + off, SMALL, next, &h[BURST + k]);
    }
    for (int k = 0; k < 2 * BURST; k++)
        ARMCI_Wait(&h[k]);
}

/* BURST strided gets of LARGE bytes in rows of ROW from next's block, packed by its data
 * server into out buffers (ARMCI_STRIDED_THRESHOLD), all in flight, then waited for. */
static void strided_gets(void **blocks, unsigned char *dst, int next)
{
    armci_hdl_t h[BURST];
    int stride[1] = {2 * ROW}, count[2] = {ROW, LARGE / ROW / 2};
    for (int k = 0; k < BURST; k++) {
        ARMCI_INIT_HANDLE(&h[k]);
        ARMCI_NbGetS((char *)blocks[next] + (size_t)k * LARGE, stride, dst + (size_t)k * LARGE,
                     stride, count, 1, next, &h[k]);
    }
    for (int k = 0; k < BURST; k++)
        ARMCI_Wait(&h[k]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    /* The same place on the next node: every put crosses the fabric through the pools, and
     * each process has one writer (the same place on the node before). */
    int k = topo_node_nprocs(topo_node_of(me));
    int next = (me + k) % n, prev = (me + n - k) % n;
    CHECK(topo_node_of(next) != topo_node_of(me) && topo_node_nprocs(topo_node_of(next)) == k,
          "run on two or more nodes of one size (%d processes, %d on mine)", n, k);
    size_t bytes = (size_t)BURST * (LARGE + SMALL);
    void **blocks = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(blocks, (armci_size_t)bytes);
    unsigned char *src = malloc(bytes), *dst = malloc(bytes);
    ARMCI_AllFence();
    long bounce0 = memstat_now(MEM_BUF_BOUNCE), small0 = memstat_now(MEM_BUF_SMALL);
    long server0 = memstat_now(MEM_BUF_SERVER); /* 0 but in a node's master */

    for (int round = 0; round < rounds; round++) {
        fill_pattern(src, bytes, seed_of(me, round));
        burst(blocks, src, next);
        long bounce_grown = memstat_now(MEM_BUF_BOUNCE), small_grown = memstat_now(MEM_BUF_SMALL);

        ARMCI_AllFence(); /* what the burst needed is kept: it was the last second's peak */
        MPI_Barrier(MPI_COMM_WORLD);
        long bad = check_pattern(blocks[me], bytes, seed_of(prev, round));
        CHECK(bad < 0, "round %d: byte %ld of what %d put differs", round, bad, prev);
        /* What I put, read back in rows packed by next's data server. */
        strided_gets(blocks, dst, next);
        for (size_t off = 0; off < (size_t)BURST * LARGE; off += 2 * ROW)
            CHECK(memcmp(dst + off, src + off, ROW) == 0, "round %d: row at %zu from %d differs",
                  round, off, next);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(bounce_grown > bounce0 && small_grown > small0,
              "round %d: the burst did not grow the pools (bounce %ld -> %ld, small %ld -> %ld B)",
              round, bounce0, bounce_grown, small0, small_grown);
        /* The server may trim while it idles between requests: its peak, not what it holds
         * now (after the first round, only the trim is checked). */
        long server_grown = memstat_peak(MEM_BUF_SERVER);
        /* Idle, fencing every quarter second: a trim looks at most once a second and keeps
         * what the busiest moment since its last look needed, so the burst's chunks go at
         * the second look after it, within 2 s and a fence. */
        double idle_from = MPI_Wtime();
        long bounce_idle, small_idle, server_idle;
        do {
            usleep(250 * 1000);
            ARMCI_AllFence();
            bounce_idle = memstat_now(MEM_BUF_BOUNCE);
            small_idle = memstat_now(MEM_BUF_SMALL);
            server_idle = memstat_now(MEM_BUF_SERVER);
        } while ((bounce_idle != bounce0 || small_idle != small0 || server_idle != server0) &&
                 MPI_Wtime() - idle_from < IDLE_SECONDS_MAX);
        if (me == 0)
            printf("round %d: bounce %ld -> %ld -> %ld B, small %ld -> %ld -> %ld B, "
                   "out buffers %ld -> %ld -> %ld B, %.2f s idle\n",
                   round, bounce0, bounce_grown, bounce_idle, small0, small_grown, small_idle,
                   server0, server_grown, server_idle, MPI_Wtime() - idle_from);
        CHECK(bounce_idle == bounce0 && small_idle == small0,
              "round %d: after %.0f idle seconds the pools hold bounce %ld B (%ld at first), "
              "small %ld B (%ld at first)",
              round, IDLE_SECONDS_MAX, bounce_idle, bounce0, small_idle, small0);
        if (topo_is_master()) {
            CHECK(server_grown > server0,
                  "round %d: the strided gets did not grow the data "
                  "server's out buffers (%ld B)",
                  round, server0);
            CHECK(server_idle == server0,
                  "round %d: after %.0f idle seconds the data server's "
                  "out buffers hold %ld B (%ld at first)",
                  round, IDLE_SECONDS_MAX, server_idle, server0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    ARMCI_Free(blocks[me]);
    free(src);
    free(dst);
    free(blocks);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
