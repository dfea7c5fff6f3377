/* The choice of ARMCI_Rmw's route (atomics.h). */
#include "verbs/atomics.h"

#include <mpi.h>

#include "core/config.h"
#include "core/error.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "verbs/device.h"
#include "verbs/memory.h"

enum rmw_route rmw_route = RMW_ROUTE_SERVER;

/* atomic_cap as an order: none < HCA < GLOB. */
static int cap_rank(enum ibv_atomic_cap cap)
{
    return cap == IBV_ATOMIC_GLOB ? 2 : cap == IBV_ATOMIC_HCA ? 1 : 0;
}

void rmw_route_choose(void)
{
    rmw_route = RMW_ROUTE_SERVER;
    /* One node: every Rmw is a CPU atomic on shared memory, nothing crosses nodes. */
    if (!net_active())
        return;
    /* Every rank must choose alike (one rank's device might differ from another's). */
    int mine = cap_rank(vdev.attr.atomic_cap), lowest = 0;
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, rt.comm);
    if (cfg.rmw == CFG_RMW_SERVER)
        return;
    /* Over UD an Rmw can only be the server's CPU atomic, and device atomics are not atomic
     * against those: with the hybrid path on, every Rmw goes to the server (job-wide). */
    if (cfg.hybrid_on) {
        if (cfg.rmw == CFG_RMW_DEVICE)
            armci_die("ARMCI_Init",
                      "ARMCI_RMW=device cannot be used with the hybrid UD path (ARMCI_HYBRID, "
                      "on with ARMCI_MAX_CONNECTIONS): set ARMCI_RMW=server or ARMCI_HYBRID=off");
        if (rt.me == 0)
            armci_log("ARMCI_Rmw on longs: the data servers (hybrid UD path on)");
        return;
    }
    /* A device atomic in flight when its connection breaks may or may not have been executed:
     * with recovery on, `auto` chooses the servers, which recognise a replayed Rmw. */
    if (cfg.recovery_timeout > 0 && cfg.rmw == CFG_RMW_AUTO) {
        if (rt.me == 0)
            armci_log("ARMCI_Rmw on longs: the data servers (ARMCI_RECOVERY_TIMEOUT on; "
                      "ARMCI_RMW=device for device atomics, whose break ends the job)");
        return;
    }
    if (lowest == 0) {
        if (cfg.rmw == CFG_RMW_DEVICE && rt.me == 0)
            armci_warn("ARMCI_RMW=device: the device (%s) has no atomics; Rmw across nodes "
                       "goes to the data servers",
                       vdev.name);
    } else {
        rmw_route = lowest == 2 ? RMW_ROUTE_CPU_DEVICE : RMW_ROUTE_DEVICE;
    }
    if (rt.me == 0)
        armci_log("ARMCI_Rmw on longs: %s", rmw_route_name(rmw_route));
}

const char *rmw_route_name(enum rmw_route r)
{
    switch (r) {
    case RMW_ROUTE_CPU_DEVICE:
        return "CPU atomics within a node, device atomics across nodes (IBV_ATOMIC_GLOB)";
    case RMW_ROUTE_DEVICE:
        return "device atomics for every one, same-node ones over a loopback connection "
               "(IBV_ATOMIC_HCA: device atomics are not atomic against the CPU's)";
    case RMW_ROUTE_SERVER:
        break;
    }
    return "CPU atomics within a node, the data server across nodes";
}
