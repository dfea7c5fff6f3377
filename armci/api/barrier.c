/*
 * The barrier of ARMCI_Barrier and armci_msg_barrier (Gupta et al.,
 * "Efficient Barrier using Remote Memory Operations on VIA-Based Clusters",
 * sections 5-6):
 *   - within a node, a flat barrier on shared-memory flags, one cache line
 *     per process: everyone raises its flag, the master waits for all, runs
 *     the inter-node part, then publishes the release;
 *   - between node masters, pairwise exchange with recursive doubling: each
 *     step RDMA-writes the barrier number into the partner's barrier buffer
 *     (one 8-byte slot per node, so each slot has a single writer) and waits
 *     for the partner's number in its own. Nodes beyond the largest power of
 *     two first report to a partner inside it, which releases them at the
 *     end: log2(N) + 2 steps.
 * A slot is "arrived" when it holds a number >= the current one, so a fast
 * node already in the next barrier is harmless; numbers are compared as
 * serial numbers (signed difference), so the 64-bit counter may wrap.
 * ARMCI_BARRIER=mpi uses MPI_Barrier instead.
 */
#include "api/barrier.h"
#include "core/mutant.h"

#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "armci.h"
#include "api/profiling.h"
#include "api/sync.h"
#include "core/config.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/memstat.h"
#include "verbs/memory.h"
#include "core/node_shared.h"
#include "transport/liveness.h"
#include "transport/progress.h"
#include "transport/remote.h"
#include "core/runtime.h"
#include "api/segment.h"
#include "core/topology.h"
#include "core/util.h"
#include "core/wait_policy.h"

static uint64_t current;    /* number of the last barrier this process took part in */
static uint64_t **slots_at; /* [num_nodes] each node master's slot array, as addressed here */
static uint64_t *my_slots;  /* [num_nodes] on masters: slot s is written by node s */
static bool use_mpi;

/* Serial-number order: true if a is at or after b, across a wrap of the counter. */
static bool reached(uint64_t a, uint64_t b)
{
    return (int64_t)(a - b) >= 0;
}

static uint64_t load_counter(const volatile uint64_t *p)
{
    return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
}

/* Waits for *p, written by `node` (-1: this node), to reach `number`: spin (wait_spins_first),
 * then yield, then nap, making progress all along; a long wait asks whether node is still
 * there. */
static void wait_for(const volatile uint64_t *p, uint64_t number, int node)
{
    double nap_after = 0;
    long nap_ns = 20000;
    for (unsigned spins = 0; !reached(load_counter(p), number); spins++) {
        if (wait_spins_first(spins, 128)) {
            cpu_relax();
            continue;
        }
        progress_poll(); /* our RDMA writes complete, connections get set up */
        if (!nap_after)
            nap_after = now_seconds() + wait_yield_seconds;
        if (now_seconds() < nap_after) {
            sched_yield();
        } else {
            /* A long wait: sleep ever longer (up to 1 ms), leaving the core to the data
             * server and to others. */
            struct timespec nap = {0, nap_ns};
            nanosleep(&nap, NULL);
            nap_ns = nap_ns < 1000000 ? 2 * nap_ns : nap_ns;
            if (node >= 0 && now_seconds() > nap_after + LIVENESS_QUIET_SECONDS)
                liveness_probe(node);
        }
    }
}

void barrier_init(void)
{
    use_mpi = cfg.barrier == CFG_BARRIER_MPI;
    /* Test mode: start just short of the wrap so that tests cross it. */
    current = fault_injected(FAULT_BARRIER_WRAP) ? UINT64_MAX - 50 : 0;
    /* Every flag and slot starts at the counter's start: "arrived at barrier 0". */
    __atomic_store_n(&node_barrier_arrive(topo.my_local)->value, current, __ATOMIC_RELEASE);
    if (topo_is_master())
        __atomic_store_n(&node_shm->barrier_release.value, current, __ATOMIC_RELEASE);
    if (use_mpi || topo.num_nodes <= 1) {
        MPI_Barrier(rt.comm);
        return;
    }
    void **blocks = xmalloc(sizeof(void *) * (size_t)rt.nprocs);
    size_t bytes = topo_is_master() ? sizeof(uint64_t) * (size_t)topo.num_nodes : 0;
    seg_malloc("ARMCI_Init", blocks, (armci_size_t)bytes, &rt.world_group);
    my_slots = blocks[rt.me];
    /* Only masters have slots: keep theirs, one per node. */
    slots_at = xmalloc(sizeof(*slots_at) * (size_t)topo.num_nodes);
    for (int node = 0; node < topo.num_nodes; node++)
        slots_at[node] = blocks[topo_node_master(node)];
    free(blocks);
    memstat_add(MEM_SYNC, (long)(sizeof(*slots_at) * (size_t)topo.num_nodes));
    for (int s = 0; my_slots && s < topo.num_nodes; s++)
        my_slots[s] = current;
    MPI_Barrier(rt.comm);
}

void barrier_fini(void)
{
    if (!slots_at)
        return;
    seg_free("ARMCI_Finalize", my_slots, &rt.world_group);
    free(slots_at);
    memstat_add(MEM_SYNC, -(long)(sizeof(*slots_at) * (size_t)topo.num_nodes));
    slots_at = NULL;
    my_slots = NULL;
}

/* RDMA-writes `number` into my slot at the master of `node`. */
static void signal_node(int node, uint64_t number)
{
    int master = topo_node_master(node);
    uint64_t *slot = slots_at[node] + topo.my_node;
    struct target t;
    seg_resolve("ARMCI_Barrier", "barrier slot", master, slot, sizeof(*slot), &t);
    remote_put_rc(&t, &number, sizeof(number));
}

static void internode(uint64_t number)
{
    int n = topo.num_nodes, id = topo.my_node;
    int p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    int extra = n - p2; /* nodes p2..n-1 pair with 0..extra-1 */

    if (id >= p2) {
        signal_node(id - p2, number);
        wait_for(&my_slots[id - p2], number, id - p2);
        return;
    }
    if (id < extra)
        wait_for(&my_slots[id + p2], number, id + p2);
    int first_round = 1;
#if ARMCI_MUTANT_IS(barrier_skips_round)
    first_round = 2;
#endif
    for (int k = first_round; k < p2; k <<= 1) {
        int partner = id ^ k;
        signal_node(partner, number);
        wait_for(&my_slots[partner], number, partner);
    }
    if (id < extra)
        signal_node(id + p2, number);
}

void barrier_run(void)
{
    if (use_mpi) {
        MPI_Barrier(rt.comm);
        return;
    }
    uint64_t number = ++current;
    struct node_flag *mine = node_barrier_arrive(topo.my_local);
    int on_node = topo_node_nprocs(topo.my_node);
    if (!topo_is_master()) {
        __atomic_store_n(&mine->value, number, __ATOMIC_RELEASE);
        wait_for(&node_shm->barrier_release.value, number, -1);
        return;
    }
    for (int i = 1; i < on_node; i++)
        wait_for(&node_barrier_arrive(i)->value, number, -1);
    if (topo.num_nodes > 1)
        internode(number);
    /* With recovery on, a flag write whose connection broke is written again only while this
     * process makes progress: it must not leave for MPI (or anything else that waits without
     * us) before its writes have landed. */
    if (topo.num_nodes > 1 && cfg.recovery_timeout > 0)
        remote_put_rc_complete();
    __atomic_store_n(&node_shm->barrier_release.value, number, __ATOMIC_RELEASE);
}

/* Everything this process issued is complete before anyone leaves the barrier. */
void PARMCI_Barrier(void)
{
    rt_require_init("ARMCI_Barrier");
    sync_all_fence();
    barrier_run();
}
PROFILED(Barrier)
