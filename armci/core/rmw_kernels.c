/* The atomics behind ARMCI_Rmw, shared by the API (same node) and the data server. */
#include "core/rmw_kernels.h"
#include "core/mutant.h"

#include "armci.h"

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
#if ARMCI_MUTANT_IS(rmw_returns_new)
        return __atomic_add_fetch((long *)target, value, __ATOMIC_SEQ_CST);
#endif
        return __atomic_fetch_add((long *)target, value, __ATOMIC_SEQ_CST);
    case ARMCI_SWAP:
        return __atomic_exchange_n((int *)target, (int)value, __ATOMIC_SEQ_CST);
    case ARMCI_SWAP_LONG:
        return __atomic_exchange_n((long *)target, value, __ATOMIC_SEQ_CST);
    default:
        return 0;
    }
}
