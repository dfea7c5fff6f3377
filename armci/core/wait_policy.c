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
double wait_yield_seconds;

/* How long a waiter yields before it starts to sleep: covers a normal barrier, without
 * burning a core through a long imbalance. */
#define YIELD_SECONDS 2e-3
/* The same in a one-node job whose ranks outnumber the cores (ARMCI_WAIT yields): there a
 * sleeper wakes late, up to its nap after the others arrived, and a program of many short
 * barriers pays that in every one (GA's scan_copyc, 4 ranks on 2 cores, medians of 3: 12.6 s
 * napping after 2 ms, 10.9 s after 50 ms, ARMCI-MPI 12.8 s). Not with data servers: a waiter
 * yielding that long takes half its core from the node's data server (CFS), and 8 B
 * accumulates to a rank waiting in a barrier slowed down. */
#define YIELD_SECONDS_ONE_NODE_OVERSUBSCRIBED 50e-3

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
    wait_yield_seconds =
        wait_yields && topo.num_nodes == 1 ? YIELD_SECONDS_ONE_NODE_OVERSUBSCRIBED : YIELD_SECONDS;
    if (rt.me == 0)
        armci_log("waiting threads %s between polls (ARMCI_WAIT)",
                  wait_yields ? "yield their core" : "spin with a pause");
}
