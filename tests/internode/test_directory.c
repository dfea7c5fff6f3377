/*
 * The directory of UD addresses keeps what a process talks to, not the job.
 * At init a node's block holds the holders' entries (every span-th node's
 * master, span = 44 M / ARMCI_DIRECTORY_BYTES rounded up), its own processes' and, on a holder, its
 * span's: checked to the byte, with nothing looked up yet. Then every process puts a block to one
 * process of the node half the job away and gets it back, byte for byte (every put checked at its
 * target too): each client has then learned the entry of that node's server unless its block had
 * it, and each data server the entries of the clients that came to it unless its block had them,
 * exactly those; what they keep beyond the block is a few records. Run
 * with ARMCI_BARRIER=mpi (no traffic before the first check), on-demand RC
 * or the hybrid UD path, with datagrams lost (lookups asked again), and
 * ARMCI_DIRECTORY_BYTES=132 (3 holders' entries: a span of 3 nodes at 9).
 * Usage: test_directory
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/topology.h"
#include "odcm/directory.h"
#include "testutil.h"

#define BLOCK        4096
#define ENTRY_BYTES  44  /* odcm/directory.c's dir_entry */
#define COUNTS_BYTES 16  /* its block's four counts */
#define RECORD_BYTES 128 /* a learned entry's record, at most */
#define TABLE_BYTES  192 /* a side's first map table: 16 slots of 12 B */

static int span, nodes;

/* Whether my node's block has rank's entry (the rule directory.c keeps). */
static bool in_my_block(int rank)
{
    int node = topo_node_of(rank);
    return node == topo.my_node || node / span * span == topo.my_node ||
           (node % span == 0 && rank == topo_node_master(node));
}

/* The process `me` sends to: of the node half the job away, the one at my place in my node. */
static int target_of(int me)
{
    int node = (topo_node_of(me) + nodes / 2) % nodes;
    int place = me - topo_node_master(topo_node_of(me));
    return topo_node_master(node) + place % topo_node_nprocs(node);
}

static unsigned char pattern(int from, int i)
{
    return (unsigned char)(from * 131 + i * 7 + 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    nodes = topo.num_nodes;
    CHECK(nodes >= 5, "run with 5 nodes or more (lookups on both sides)");
    span = (int)((44L * nodes + cfg.directory_bytes - 1) / cfg.directory_bytes);
    CHECK(span > 1, "run with ARMCI_DIRECTORY_BYTES below 44 x %d (holders hold others)", nodes);

    int holders = (nodes + span - 1) / span, held = 0;
    if (topo.my_node % span == 0)
        for (int node = topo.my_node; node < nodes && node < topo.my_node + span; node++)
            held += topo_node_nprocs(node);
    long want =
        COUNTS_BYTES + ENTRY_BYTES * (long)(holders + topo_node_nprocs(topo.my_node) + held);
    CHECK(directory_node_bytes() == want, "node %d's block is %ld B, not %ld", topo.my_node,
          directory_node_bytes(), want);
    CHECK(directory_lookups() == 0 && directory_learned(DIR_CLIENTS) == 0 &&
              directory_learned(DIR_SERVER) == 0,
          "looked up before any traffic");
    CHECK(directory_bytes() == directory_shared_bytes(), "learned records before any traffic");

    void **seg = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(seg, (armci_size_t)n * BLOCK);
    memset(seg[me], 0, (size_t)n * BLOCK);
    MPI_Barrier(MPI_COMM_WORLD);

    int to = target_of(me);
    unsigned char *mine = malloc(BLOCK), *back = malloc(BLOCK);
    for (int i = 0; i < BLOCK; i++)
        mine[i] = pattern(me, i);
    ARMCI_Put(mine, (char *)seg[to] + (size_t)me * BLOCK, BLOCK, to);
    ARMCI_Get((char *)seg[to] + (size_t)me * BLOCK, back, BLOCK, to);
    CHECK(memcmp(mine, back, BLOCK) == 0, "rank %d: block read back from %d differs", me, to);
    ARMCI_AllFence();
    MPI_Barrier(MPI_COMM_WORLD);
    for (int from = 0; from < n; from++) {
        if (target_of(from) != me)
            continue;
        const unsigned char *got = (const unsigned char *)seg[me] + (size_t)from * BLOCK;
        for (int i = 0; i < BLOCK; i++)
            CHECK(got[i] == pattern(from, i), "rank %d: byte %d of rank %d's put is %u", me, i,
                  from, got[i]);
    }

    long client_want = in_my_block(topo_node_master(topo_node_of(to))) ? 0 : 1;
    CHECK(directory_learned(DIR_CLIENTS) == client_want,
          "rank %d learned %ld servers' entries, not %ld (it sent to node %d)", me,
          directory_learned(DIR_CLIENTS), client_want, topo_node_of(to));
    long server_want = 0;
    for (int from = 0; topo_is_master() && from < n; from++)
        server_want += topo_node_of(target_of(from)) == topo.my_node && !in_my_block(from);
    CHECK(directory_learned(DIR_SERVER) == server_want,
          "node %d's server learned %ld clients' entries, not %ld", topo.my_node,
          directory_learned(DIR_SERVER), server_want);
    long learned = directory_learned(DIR_CLIENTS) + directory_learned(DIR_SERVER);
    long extra = directory_bytes() - directory_shared_bytes();
    CHECK(directory_lookups() >= learned && extra <= learned * RECORD_BYTES + 2 * TABLE_BYTES,
          "rank %d: %ld lookups, %ld entries learned, %ld B beyond the block", me,
          directory_lookups(), learned, extra);

    long mx[2] = {extra, directory_lookups()}, out[2];
    MPI_Reduce(mx, out, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("PASS: %d processes in %d nodes, span %d: at most %ld B learned and %ld lookups "
               "a process\n",
               n, nodes, span, out[0], out[1]);
    free(mine);
    free(back);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
