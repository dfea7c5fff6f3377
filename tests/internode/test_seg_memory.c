/*
 * What the runtime keeps per ARMCI_Malloc: the segment table grows with the
 * nodes of the group (a server base and rkey per node), the block index by
 * one compact record per process that has a block; topology and mutex
 * tables keep nothing per process; the directory of UD addresses is kept
 * once per node, each of its processes counting a share. Prints one SEGMEM line for
 * seg-memory.sh, which compares runs of different sizes.
 * Usage: test_seg_memory [ARRAYS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/segment.h"
#include "core/memstat.h"
#include "core/topology.h"
#include "odcm/directory.h"
#include "testutil.h"

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int arrays = argc > 1 ? atoi(argv[1]) : 8;

    long table0 = seg_table_bytes(), index0 = seg_index_bytes();
    long sync0 = memstat_now(MEM_SYNC);
    void ***ptrs = malloc(sizeof(*ptrs) * (size_t)arrays);
    for (int a = 0; a < arrays; a++) {
        ptrs[a] = malloc(sizeof(void *) * (size_t)n);
        ARMCI_Malloc(ptrs[a], 1000 + 8 * a);
    }
    ARMCI_Create_mutexes(3);
    long table = seg_table_bytes() - table0, index = seg_index_bytes() - index0;
    long mutex_table = memstat_now(MEM_SYNC) - sync0;

    /* Each segment (the arrays and the mutexes') holds itself and one entry per node; the
     * slot table may have grown too. */
    int segs = arrays + 1;
    long per_segment =
        (long)(sizeof(struct segment) + sizeof(struct seg_node) * (size_t)topo.num_nodes);
    long slots = table - segs * per_segment;
    CHECK(slots >= 0 && slots % (long)sizeof(void *) == 0,
          "segment table: %ld bytes for %d segments of %d nodes", table, segs, topo.num_nodes);
    /* One record per block (every process has one in each), plus the per-process offsets
     * the first block brings. */
    long offsets = index0 ? 0 : (long)sizeof(uint32_t) * (n + 1);
    long per_block = (index - offsets) / ((long)segs * n);
    CHECK(per_block * segs * n == index - offsets && per_block <= 24,
          "index: %ld bytes for %d blocks", index, segs * n);
    CHECK(mutex_table == 0, "mutex tables: %ld bytes", mutex_table);
    CHECK(memstat_now(MEM_SEGMENTS) == seg_table_bytes() &&
              memstat_now(MEM_INDEX) == seg_index_bytes(),
          "memstat agrees with the segment module");
    CHECK(memstat_now(MEM_DIRECTORY) == directory_bytes(), "memstat agrees with the directory");
    long shares = 0;
    MPI_Allreduce(&(long){directory_bytes()}, &shares, 1, MPI_LONG, MPI_SUM, topo.node_comm);
    CHECK(directory_node_bytes() > 0 && shares == directory_node_bytes(),
          "the node's processes count %ld bytes of directory, the node holds %ld", shares,
          directory_node_bytes());
    CHECK(memstat_now(MEM_TOPOLOGY) == topo_map_bytes(&topo), "memstat agrees with the topology");

    /* Mutexes work with nothing per process: lock the last process's last one. */
    ARMCI_Lock(2, n - 1);
    ARMCI_Unlock(2, n - 1);

    long v[6] = {(table - slots) / segs, (index - offsets) / segs, topo_map_bytes(&topo),
                 directory_bytes(),      memstat_runtime_peak(),   directory_node_bytes()};
    long mx[6];
    MPI_Reduce(v, mx, 6, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("SEGMEM procs=%d nodes=%d table_per_segment=%ld index_per_segment=%ld topology=%ld "
               "directory=%ld rt_mem_max=%ld directory_node=%ld\n",
               n, topo.num_nodes, mx[0], mx[1], mx[2], mx[3], mx[4], mx[5]);

    ARMCI_Destroy_mutexes();
    for (int a = 0; a < arrays; a++) {
        ARMCI_Free(ptrs[a][me]);
        free(ptrs[a]);
    }
    free(ptrs);
    CHECK(seg_table_bytes() >= table0 && seg_index_bytes() == index0,
          "freeing gives the memory back (table %ld -> %ld, index %ld -> %ld)", table0,
          seg_table_bytes(), index0, seg_index_bytes());
    if (me == 0)
        printf("PASS\n");
    ARMCI_Finalize();
    return 0;
}
