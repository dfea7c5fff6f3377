/*
 * One segment's block index, written once per node (block_index.h).
 */
#include "api/block_index.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/fault.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/runtime.h"
#include "core/shm.h"
#include "core/topology.h"
#include "core/util.h"

static long shares; /* what every live index of this process counts */

void block_index_regular(struct block_index *ix, uintptr_t base, uint64_t bytes)
{
    *ix = (struct block_index){.base = base, .regular = bytes};
}

/* The bytes of ix's runs (and starts). */
static size_t block_index_size(const struct block_index *ix)
{
    return (sizeof(struct block_run) + (ix->base ? 0 : sizeof(uint64_t))) * ix->count;
}

/* The writer's copy of the runs (and starts) into the index's memory. */
static void write_runs(char *out, const struct block_run *runs, const uint64_t *starts,
                       uint32_t count)
{
    size_t bytes = sizeof(*runs) * count;
    bool dies = fault_injected(FAULT_INDEX_WRITER_DIES) && topo.my_node == topo.num_nodes - 1;
    size_t half = dies ? bytes / 2 : bytes;
    memcpy(out, runs, half);
    if (half < bytes)
        raise(SIGKILL); /* as a writer killed halfway: its node must not go on */
    memcpy(out + half, (const char *)runs + half, bytes - half);
    if (starts)
        memcpy(out + bytes, starts, sizeof(*starts) * count);
}

void block_index_publish(struct block_index *ix, MPI_Comm node_group, const char *tag,
                         uintptr_t base, const struct block_run *runs, const uint64_t *starts,
                         uint32_t count, int32_t end)
{
    int members, rank;
    MPI_Comm_size(node_group, &members);
    MPI_Comm_rank(node_group, &rank);
    *ix = (struct block_index){.base = base, .count = count, .end = end};
    /* Starts only where the mapping is not symmetric (every member knows whether it is). */
    size_t bytes = block_index_size(ix);
    if (count == 0)
        return;

    char *out;
    if (members == 1) {
        out = xmalloc(bytes);
    } else {
        out = shm_map_collective(node_group, tag, bytes, NULL, NULL);
        ix->shared = true;
    }
    if (rank == 0)
        write_runs(out, runs, base ? NULL : starts, count);
    if (members > 1) {
        MPI_Barrier(node_group); /* written before anyone reads */
        /* Read-only from here: a stray write of the application faults where it happens
         * instead of sending later transfers to the wrong place. */
        if (mprotect(out, bytes, PROT_READ) != 0)
            armci_die(NULL, "mprotect of the block index (%zu bytes) failed: %s", bytes,
                      strerror(errno));
    }
#if ARMCI_MUTANT_IS(index_private_copy) /* the bug: every process keeps its own copy */
    if (members > 1) {
        char *copy = xmalloc(bytes);
        memcpy(copy, out, bytes);
        shm_unmap(out, bytes);
        out = copy;
        ix->shared = false;
    }
#endif
    ix->runs = (const struct block_run *)out;
    /* Runs rise by process, at least one apart: count runs from process 0 that end at the job's
     * last are one a process. */
    ix->dense = count == (uint32_t)rt.nprocs && end == rt.nprocs && ix->runs[0].proc == 0;

    /* The writer counts the remainder of the division too: the node's shares add up. */
    ix->held = (long)bytes / members + (rank == 0 ? (long)bytes % members : 0);
    __atomic_add_fetch(&shares, ix->held, __ATOMIC_RELAXED);
    memstat_add(MEM_INDEX, ix->held);
}

void block_index_release(struct block_index *ix)
{
    void *mem = (void *)ix->runs; /* this process's mapping or allocation (none: regular) */
    if (ix->shared)
        shm_unmap(mem, block_index_size(ix));
    else
        free(mem);
    __atomic_sub_fetch(&shares, ix->held, __ATOMIC_RELAXED);
    memstat_add(MEM_INDEX, -ix->held);
    *ix = (struct block_index){0};
}

long block_index_bytes(void)
{
    return __atomic_load_n(&shares, __ATOMIC_RELAXED);
}
