/*
 * What the runtime keeps per ARMCI_Malloc: the segment table grows with the
 * nodes of the group (a server base and rkey per node); the block index, one
 * compact record per process that has a block, and the directory of UD
 * addresses are kept once per node, in one object of its shared memory that
 * every process of the node maps (the same inode in /proc/self/maps), each
 * counting a share; topology and mutex tables keep nothing per process.
 * Prints one SEGMEM line for seg-memory.sh, which compares runs of different
 * sizes.
 * Usage: test_seg_memory [ARRAYS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/segment.h"
#include "core/memstat.h"
#include "core/topology.h"
#include "odcm/directory.h"
#include "proc_memory.h"
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
    /* One record per block (every process has one in each), once per node: the node's
     * processes' shares add up to the records, and they all map one shared object. */
    long node_index = 0;
    MPI_Allreduce(&index, &node_index, 1, MPI_LONG, MPI_SUM, topo.node_comm);
    CHECK(node_index == (long)sizeof(struct block) * segs * n && sizeof(struct block) <= 24,
          "index: the node's processes count %ld bytes for %d blocks", node_index, segs * n);
    for (int a = 0; a < arrays; a++) {
        const struct block_index *ix = seg_index_of(ptrs[a][me]);
        CHECK(ix && ix->count == (uint32_t)n, "array %d: index of %d blocks", a, n);
        for (int p = 0; p < n; p++)
            CHECK(block_index_of(ix, p)->proc == p && block_index_of(ix, p)->bytes == 1000u + 8 * a,
                  "array %d: process %d's record", a, p);
        char perms[8] = "", path[256] = "";
        long inode = mapping_of(ix->blocks, perms, path), lo = 0, hi = 0;
        int k = topo_node_nprocs(topo.my_node);
        if (k > 1)
            CHECK(inode > 0 && perms[3] == 's' && strstr(path, "/dev/shm/armci-"),
                  "array %d: index at %p is not in shared memory (%s %s)", a,
                  (const void *)ix->blocks, perms, path);
        MPI_Allreduce(&inode, &lo, 1, MPI_LONG, MPI_MIN, topo.node_comm);
        MPI_Allreduce(&inode, &hi, 1, MPI_LONG, MPI_MAX, topo.node_comm);
        CHECK(lo == hi, "array %d: the node's processes map different objects (%ld, %ld)", a, lo,
              hi);
    }
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

    long v[6] = {(table - slots) / segs, index / segs,           topo_map_bytes(&topo),
                 directory_bytes(),      memstat_runtime_peak(), directory_node_bytes()};
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
