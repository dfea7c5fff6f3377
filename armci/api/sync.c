/*
 * Completion: Fence/AllFence and the non-blocking handle calls (ARMCI_Barrier,
 * a fence then a barrier, is barrier.c's). Same-node operations complete at
 * once, so only inter-node traffic is ever waited for.
 */
#include "api/sync.h"
#include "core/mutant.h"

#include "armci.h"
#include "core/error.h"
#include "verbs/memory.h"
#include "api/profiling.h"
#include "transport/progress.h"
#include "transport/remote.h"
#include "api/user_handles.h"
#include "core/runtime.h"
#include "core/topology.h"

void sync_all_fence(void)
{
    if (net_active())
        remote_fence_all();
}

void PARMCI_Fence(int proc)
{
    rt_require_init("ARMCI_Fence");
    check_proc("ARMCI_Fence", "proc", proc);
#if ARMCI_MUTANT_IS(fence_noop)
    return;
#endif
    if (!topo_same_node(proc))
        remote_fence(topo_node_of(proc));
}
PROFILED(Fence)

void PARMCI_AllFence(void)
{
    rt_require_init("ARMCI_AllFence");
#if ARMCI_MUTANT_IS(fence_noop)
    return;
#endif
    sync_all_fence();
}
PROFILED(AllFence)

int PARMCI_Wait(armci_hdl_t *hdl)
{
    rt_require_init("ARMCI_Wait");
    return hdl_wait("ARMCI_Wait", hdl);
}
PROFILED(Wait)

int PARMCI_Test(armci_hdl_t *hdl)
{
    rt_require_init("ARMCI_Test");
    return hdl_test("ARMCI_Test", hdl);
}
PROFILED(Test)

/* Implicit-handle operations are tracked together, so waiting for one target waits for all. */
int PARMCI_WaitProc(int proc)
{
    rt_require_init("ARMCI_WaitProc");
    check_proc("ARMCI_WaitProc", "proc", proc);
    handle_wait(handle_implicit());
    return 0;
}
PROFILED(WaitProc)

int PARMCI_WaitAll(void)
{
    rt_require_init("ARMCI_WaitAll");
    handle_wait(handle_implicit());
    return 0;
}
PROFILED(WaitAll)

void ARMCI_INIT_HANDLE(armci_hdl_t *hdl)
{
    check_ptr("ARMCI_INIT_HANDLE", "hdl", hdl);
    hdl_init(hdl);
}

void ARMCI_SET_AGGREGATE_HANDLE(armci_hdl_t *hdl)
{
    check_ptr("ARMCI_SET_AGGREGATE_HANDLE", "hdl", hdl);
    hdl_set_aggregate(hdl, true);
}

void ARMCI_UNSET_AGGREGATE_HANDLE(armci_hdl_t *hdl)
{
    check_ptr("ARMCI_UNSET_AGGREGATE_HANDLE", "hdl", hdl);
    hdl_set_aggregate(hdl, false);
}
