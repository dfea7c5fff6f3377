/*
 * What the runtime keeps per ARMCI_Malloc: the segment table grows with the
 * nodes of the group (an rkey per node: the members and every node's data
 * server map the node objects at agreed addresses); the block index
 * keeps nothing for a regular array (every process the same bytes: every
 * member maps its node's object at one address, and the places follow from
 * the ranks) and, for an irregular one, runs of blocks (here a run per
 * process: the sizes change from one rank to the next), kept once per node in one object of its
 * shared memory that every process of the node maps (the same inode in /proc/self/maps), each
 * counting a share; so is the directory of UD addresses; topology and mutex
 * tables keep nothing per process.
 * Prints one SEGMEM line for seg-memory.sh, which compares runs of different
 * sizes.
 * Usage: test_seg_memory [ARRAYS]   (ARRAYS regular and ARRAYS irregular ones)
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

static int me, n;

/* Array a's block of rank p: the first `regular` arrays alike everywhere, the others not. */
static size_t array_bytes(int a, int regular, int p)
{
    return 1000 + 8 * (size_t)a + (a < regular ? 0 : 72 * (size_t)(p % 3));
}

/* Array a's index: symmetric; no runs when regular; else one a process, in shared memory
 * when the node has more than one. Every block where ptr_arr says, of its size. */
static void check_array(int a, int regular, void **ptrs)
{
    const struct block_index *ix = seg_index_of(ptrs[me]);
    CHECK(ix && ix->base, "array %d: not symmetric", a);
    const struct segment *s = seg_of(ptrs[me]);
    CHECK(!s->server_bases && !s->node_ids && s->server_offset,
          "array %d: a server base (%p) or node id (%p) per node, server offset %llu", a,
          (void *)s->server_bases, (void *)s->node_ids, (unsigned long long)s->server_offset);
    CHECK(a < regular ? ix->regular && ix->count == 0 : !ix->regular && ix->count == (uint32_t)n,
          "array %d: %u runs (regular %llu)", a, ix->count, (unsigned long long)ix->regular);
    for (int p = 0; p < n; p++) {
        struct block b;
        CHECK(block_index_of(ix, p, topo_node_of(p), &b) && b.bytes == array_bytes(a, regular, p) &&
                  b.start == (uintptr_t)ptrs[p],
              "array %d: process %d's block", a, p);
    }
    if (a < regular)
        return;
    char perms[8] = "", path[256] = "";
    long inode = mapping_of(ix->runs, perms, path), lo = 0, hi = 0;
    if (topo_node_nprocs(topo.my_node) > 1)
        CHECK(inode > 0 && perms[3] == 's' && strstr(path, "/dev/shm/armci-"),
              "array %d: index at %p is not in shared memory (%s %s)", a, (const void *)ix->runs,
              perms, path);
    MPI_Allreduce(&inode, &lo, 1, MPI_LONG, MPI_MIN, topo.node_comm);
    MPI_Allreduce(&inode, &hi, 1, MPI_LONG, MPI_MAX, topo.node_comm);
    CHECK(lo == hi, "array %d: the node's processes map different objects (%ld, %ld)", a, lo, hi);
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int arrays = argc > 1 ? atoi(argv[1]) : 4;
    long regular_index = 0;

    long table0 = seg_table_bytes(), index0 = seg_index_bytes();
    long sync0 = memstat_now(MEM_SYNC);
    /* The regular arrays first, then the irregular ones (bytes differ from one rank to the
     * next), which alone have runs. */
    void ***ptrs = malloc(sizeof(*ptrs) * (size_t)(2 * arrays));
    for (int a = 0; a < 2 * arrays; a++) {
        ptrs[a] = malloc(sizeof(void *) * (size_t)n);
        ARMCI_Malloc(ptrs[a], (armci_size_t)array_bytes(a, arrays, me));
        if (a == arrays - 1)
            regular_index = seg_index_bytes() - index0;
    }
    ARMCI_Create_mutexes(3);
    long table = seg_table_bytes() - table0, index = seg_index_bytes() - index0;
    long mutex_table = memstat_now(MEM_SYNC) - sync0;

    /* Each segment (the arrays and the mutexes', world arrays the data servers map at one
     * address too) holds itself and an rkey per node; the slot table may have grown too. */
    int segs = 2 * arrays + 1;
    long per_segment = (long)(sizeof(struct segment) + sizeof(uint32_t) * (size_t)topo.num_nodes);
    long slots = table - segs * per_segment;
    CHECK(slots >= 0 && slots % (long)sizeof(void *) == 0,
          "segment table: %ld bytes for %d segments of %d nodes", table, segs, topo.num_nodes);
    /* Regular arrays and the mutexes (3 a process): nothing. The irregular ones: one 16-byte
     * run per block (every process has one in each, at one address everywhere: no
     * address in it), once per node: the node's processes' shares add up to the runs,
     * and they all map one shared object. */
    CHECK(regular_index == 0, "index of %d regular arrays: %ld bytes", arrays, regular_index);
    long node_index = 0;
    MPI_Allreduce(&index, &node_index, 1, MPI_LONG, MPI_SUM, topo.node_comm);
    CHECK(node_index == (long)sizeof(struct block_run) * arrays * n &&
              sizeof(struct block_run) == 16,
          "index: the node's processes count %ld bytes for %d blocks", node_index, arrays * n);
    for (int a = 0; a < 2 * arrays; a++)
        check_array(a, arrays, ptrs[a]);
    CHECK(mutex_table == 0, "mutex tables: %ld bytes", mutex_table);
    CHECK(memstat_now(MEM_SEGMENTS) == seg_table_bytes() &&
              memstat_now(MEM_INDEX) == seg_index_bytes(),
          "memstat agrees with the segment module");
    CHECK(memstat_now(MEM_DIRECTORY) == directory_bytes(), "memstat agrees with the directory");
    long shares = 0;
    MPI_Allreduce(&(long){directory_shared_bytes()}, &shares, 1, MPI_LONG, MPI_SUM, topo.node_comm);
    CHECK(directory_node_bytes() > 0 && shares == directory_node_bytes(),
          "the node's processes count %ld bytes of directory, the node holds %ld", shares,
          directory_node_bytes());
    CHECK(memstat_now(MEM_TOPOLOGY) == topo_map_bytes(&topo), "memstat agrees with the topology");

    /* Mutexes work with nothing per process: lock the last process's last one. */
    ARMCI_Lock(2, n - 1);
    ARMCI_Unlock(2, n - 1);

    long v[6] = {(table - slots) / segs,   index / arrays,         topo_map_bytes(&topo),
                 directory_shared_bytes(), memstat_runtime_peak(), directory_node_bytes()};
    long mx[6];
    MPI_Reduce(v, mx, 6, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("SEGMEM procs=%d nodes=%d table_per_segment=%ld index_per_segment=%ld topology=%ld "
               "directory=%ld rt_mem_max=%ld directory_node=%ld\n",
               n, topo.num_nodes, mx[0], mx[1], mx[2], mx[3], mx[4], mx[5]);

    ARMCI_Destroy_mutexes();
    for (int a = 0; a < 2 * arrays; a++) {
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
