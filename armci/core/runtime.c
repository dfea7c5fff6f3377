/* The process-wide runtime state (runtime.h); init.c fills it in. */
#include "core/runtime.h"

#include "core/hybrid_stats.h"
#include "core/recovery_stats.h"

#include "core/error.h"

struct runtime rt;
struct hybrid_stats hybrid_stats;
struct recovery_stats recovery_stats;

void rt_require_init(const char *call)
{
    if (!rt.initialized)
        armci_die(call, "ARMCI is not initialised: call ARMCI_Init first");
}

void check_proc(const char *call, const char *arg, int proc)
{
    if (proc < 0 || proc >= rt.nprocs)
        armci_die(call, "argument %s=%d is not a valid process rank (job has %d processes)", arg,
                  proc, rt.nprocs);
}
