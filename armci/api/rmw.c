/*
 * ARMCI_Rmw: fetch-and-add and swap on int and long. Same-node targets use
 * CPU atomics on the shared memory; the data server uses the same atomics
 * for other nodes, so both are atomic with respect to each other.
 */
#include <stdint.h>

#include "armci.h"
#include "core/error.h"
#include "api/profiling.h"
#include "transport/remote.h"
#include "core/rmw_kernels.h"
#include "core/runtime.h"
#include "api/segment.h"

int PARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc)
{
    static const char call[] = "ARMCI_Rmw";
    rt_require_init(call);
    size_t size = rmw_operand_size(op);
    if (!size)
        armci_die(call, "argument op=%d is not an ARMCI_FETCH_AND_ADD/_LONG or ARMCI_SWAP/_LONG",
                  op);
    check_proc(call, "proc", proc);
    check_local(call, "ploc", ploc);
    check_ptr(call, "prem", prem);
    if ((uintptr_t)prem % size)
        armci_die(call, "argument prem=%p is not aligned to %zu bytes", prem, size);

    /* Fetch-and-add adds `value`; swap exchanges the contents of ploc. */
    bool is_swap = op == ARMCI_SWAP || op == ARMCI_SWAP_LONG;
    long operand = value;
    if (is_swap)
        operand = size == sizeof(int) ? *(int *)ploc : *(long *)ploc;

    struct target t;
    seg_resolve(call, "prem", proc, prem, size, &t);
    long old = t.local ? rmw_apply(op, t.local, operand) : remote_rmw(&t, op, operand);

    if (size == sizeof(int))
        *(int *)ploc = (int)old;
    else
        *(long *)ploc = old;
    return 0;
}
PROFILED(Rmw)
