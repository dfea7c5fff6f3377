/* The wait policy (wait_policy.h): ARMCI_WAIT, or for auto a count of this host's threads. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "core/wait_policy.h"

#include <mpi.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/runtime.h"
#include "core/topology.h"

bool wait_yields;

#define MASK_WORDS (CPU_SETSIZE / (8 * (int)sizeof(unsigned long)))

/*
 * True when the job's processes on this host, with a data-server thread per
 * node master of a multi-node job, outnumber the CPUs they may run on (the
 * union of their affinity masks: bound or not, they share those).
 */
static bool host_oversubscribed(int *threads, int *cpus)
{
    MPI_Comm host;
    MPI_Comm_split_type(rt.comm, MPI_COMM_TYPE_SHARED, rt.me, MPI_INFO_NULL, &host);
    int mine = 1 + (topo.num_nodes > 1 && topo_is_master());
    MPI_Allreduce(&mine, threads, 1, MPI_INT, MPI_SUM, host);

    cpu_set_t set;
    unsigned long mask[MASK_WORDS];
    memset(mask, 0, sizeof(mask));
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
            if (CPU_ISSET(cpu, &set))
                mask[cpu / (8 * (int)sizeof(unsigned long))] |=
                    1UL << (cpu % (8 * (int)sizeof(unsigned long)));
    } else {
        mask[0] = 1; /* unknown: count one CPU, the cautious answer */
    }
    MPI_Allreduce(MPI_IN_PLACE, mask, MASK_WORDS, MPI_UNSIGNED_LONG, MPI_BOR, host);
    MPI_Comm_free(&host);
    *cpus = 0;
    for (int w = 0; w < MASK_WORDS; w++)
        *cpus += __builtin_popcountl(mask[w]);
    return *threads > *cpus;
}

void wait_policy_init(void)
{
    int threads = 0, cpus = 0;
    switch (cfg.wait) {
    case CFG_WAIT_SPIN:
        wait_yields = false;
        break;
    case CFG_WAIT_YIELD:
        wait_yields = true;
        break;
    default:
        wait_yields = host_oversubscribed(&threads, &cpus);
        if (rt.me == 0)
                armci_log("this host runs %d threads of the job (ranks and data servers) on %d CPUs",
                      threads, cpus);
        break;
    }
    if (rt.me == 0)
        armci_log("waiting threads %s between polls (ARMCI_WAIT)",
                  wait_yields ? "yield their core" : "spin with a pause");
}
