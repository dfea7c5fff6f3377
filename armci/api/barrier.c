/*
 * The barrier of ARMCI_Barrier and armci_msg_barrier (Gupta et al.,
 * "Efficient Barrier using Remote Memory Operations on VIA-Based Clusters",
 * sections 5-6):
 *   - within a node, a flat barrier on shared-memory flags, one cache line
 *     per process: everyone raises its flag, the master waits for all, runs
 *     the inter-node part, then publishes the release;
 *   - between node masters, pairwise exchange with recursive doubling: each
 *     step RDMA-writes the barrier number into the partner's barrier buffer
 *     and waits for the partner's number in its own. Nodes beyond the
 *     largest power of two first report to a partner inside it, which
 *     releases them at the end: log2(N) + 2 steps. A master's buffer has one
 *     8-byte slot per step (slot 0: the exchange with the node beyond; slot
 *     r: round r), each written by the one partner of that step. It is
 *     registered memory of its own, not an ARMCI_Malloc'd segment (whose
 *     tables would describe every node in every process), and each master
 *     learns from its partners alone where theirs are (MPI at init):
 *     log2(N) + 1 entries a master, not one per node.
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
#include "core/topology.h"
#include "core/util.h"
#include "core/wait_policy.h"

static uint64_t current; /* number of the last barrier this process took part in */
static int nslots;       /* a master's slots: 1 + the rounds of the power-of-two part */
static struct barrier_steps {
    int p2;    /* the largest power of two <= the nodes */
    int extra; /* nodes p2 .. n-1, paired with 0 .. extra-1 */
} steps;
/* Where a master's slots are, as its partners address them. */
struct slots_place {
    uint64_t addr;
    uint32_t rkey;
};
static struct slots_place *partner_slots; /* [nslots] on masters: step s's partner's slots */
static uint64_t *my_slots; /* [nslots] on masters, registered: slot s written by step s's partner */
static struct net_mr *my_slots_mr;
#define SLOTS_TAG 0x42a0 /* + the step: the exchange of slots_place at init (rt.comm) */
static bool use_mpi;

/* The steps between masters (internode): slot 0 pairs a node beyond the largest power of two
 * with one inside it; slot r (1, 2, ...) is round r, with partner id ^ 2^(r-1). */
static struct barrier_steps steps_of(int n)
{
    struct barrier_steps s = {.p2 = 1};
    while (s.p2 * 2 <= n)
        s.p2 *= 2;
    s.extra = n - s.p2;
    return s;
}

/* Slot 0, and one a round of the power-of-two part: 1 + log2 p2. */
static int slots_of(struct barrier_steps s)
{
    int slots = 1;
    for (int k = 1; k < s.p2; k <<= 1)
        slots++;
    return slots;
}

/* The node this node exchanges with at step `slot`, or -1 if it has no partner there. */
static int partner_at(int id, int slot, struct barrier_steps s)
{
    if (slot > 0)
        return id < s.p2 ? id ^ (1 << (slot - 1)) : -1;
    if (id >= s.p2)
        return id - s.p2;
    return id < s.extra ? id + s.p2 : -1;
}

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

#define SYNC_BYTES_A_STEP (sizeof(*partner_slots) + sizeof(*my_slots))

/* A master registers its slots and tells each step's partner where they are, learning
 * theirs: one message each way a step. */
static void exchange_slots(void)
{
    size_t bytes = sizeof(*my_slots) * (size_t)nslots;
    my_slots = xmalloc_registrable(bytes);
    for (int s = 0; s < nslots; s++)
        my_slots[s] = current;
    my_slots_mr = net_reg("ARMCI_Init", my_slots, bytes, true);
    struct slots_place mine = {(uintptr_t)my_slots, my_slots_mr->rkey};
    partner_slots = xcalloc((size_t)nslots, sizeof(*partner_slots));
    memstat_add(MEM_SYNC, (long)(SYNC_BYTES_A_STEP * (size_t)nslots));
    MPI_Request *reqs = xmalloc(sizeof(*reqs) * 2 * (size_t)nslots);
    int n = 0;
    for (int s = 0; s < nslots; s++) {
        int partner = partner_at(topo.my_node, s, steps);
        if (partner < 0)
            continue;
        int master = topo_node_master(partner);
        MPI_Irecv(&partner_slots[s], sizeof(partner_slots[s]), MPI_BYTE, master, SLOTS_TAG + s,
                  rt.comm, &reqs[n++]);
        MPI_Isend(&mine, sizeof(mine), MPI_BYTE, master, SLOTS_TAG + s, rt.comm, &reqs[n++]);
    }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
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
    steps = steps_of(topo.num_nodes);
    nslots = slots_of(steps);
    if (topo_is_master())
        exchange_slots();
    MPI_Barrier(rt.comm);
}

void barrier_fini(void)
{
    if (!my_slots)
        return;
    /* ARMCI_Finalize's MPI_Barrier came first: every write into these slots has landed (each
     * was waited for) and no barrier follows to write more. */
    net_dereg(my_slots_mr);
    free(my_slots);
    free(partner_slots);
    memstat_add(MEM_SYNC, -(long)(SYNC_BYTES_A_STEP * (size_t)nslots));
    my_slots = NULL;
    partner_slots = NULL;
}

/* RDMA-writes `number` into slot `slot` at the master of `node`, this step's partner. */
static void signal_partner(int slot, int node, uint64_t number)
{
    struct target t = {.server_addr = partner_slots[slot].addr + sizeof(number) * (size_t)slot,
                       .rkey = partner_slots[slot].rkey,
                       .proc = topo_node_master(node),
                       .node = node};
    remote_put_rc(&t, &number, sizeof(number));
}

static void internode(uint64_t number)
{
    int id = topo.my_node;
    if (id >= steps.p2) {
        signal_partner(0, id - steps.p2, number);
        wait_for(&my_slots[0], number, id - steps.p2);
        return;
    }
    if (id < steps.extra)
        wait_for(&my_slots[0], number, id + steps.p2);
    int first_round = 1;
#if ARMCI_MUTANT_IS(barrier_skips_round)
    first_round = 2;
#endif
    for (int r = first_round; r < nslots; r++) {
        int partner = partner_at(id, r, steps);
        signal_partner(r, partner, number);
        wait_for(&my_slots[r], number, partner);
    }
    if (id < steps.extra)
        signal_partner(0, id + steps.p2, number);
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
