/*
 * ARMCI_Rmw: fetch-and-add and swap on int and long. Same-node targets use
 * CPU atomics on the shared memory; the data server uses the same atomics
 * for other nodes, so both are atomic with respect to each other.
 */
#include <stdint.h>

#include "armci.h"
#include "error.h"
#include "profiling.h"
#include "remote.h"
#include "rmw_local.h"
#include "runtime.h"
#include "segment.h"

size_t rmw_operand_size(int op)
{
    switch (op) {
    case ARMCI_FETCH_AND_ADD:
    case ARMCI_SWAP:
        return sizeof(int);
    case ARMCI_FETCH_AND_ADD_LONG:
    case ARMCI_SWAP_LONG:
        return sizeof(long);
    default:
        return 0;
    }
}

long rmw_apply(int op, void *target, long value)
{
    switch (op) {
    case ARMCI_FETCH_AND_ADD:
        return __atomic_fetch_add((int *)target, (int)value, __ATOMIC_SEQ_CST);
    case ARMCI_FETCH_AND_ADD_LONG:
        return __atomic_fetch_add((long *)target, value, __ATOMIC_SEQ_CST);
    case ARMCI_SWAP:
        return __atomic_exchange_n((int *)target, (int)value, __ATOMIC_SEQ_CST);
    case ARMCI_SWAP_LONG:
        return __atomic_exchange_n((long *)target, value, __ATOMIC_SEQ_CST);
    default:
        return 0;
    }
}

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
