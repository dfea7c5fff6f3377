/*
 * ARMCI_Rmw: fetch-and-add and swap on int and long. The route of the long
 * forms is chosen once at ARMCI_Init (verbs/atomics.h): CPU atomics on the
 * shared memory within a node and the target node's data server (which
 * uses the same CPU atomics) across nodes; or the device's atomics across
 * nodes, and within a node too when they are not atomic against the CPU's.
 *
 * The int forms never use the device. A device atomic is 8 bytes wide: an
 * int's would be a compare-and-swap loop on the aligned word that holds it,
 * whose write puts back the other int of the word as it read it. Device
 * atomics are not atomic against plain writes (softib reads and writes the
 * word under its own lock; HCAs promise nothing either), so a put to that
 * neighbouring int landing in between would be lost. The int forms stay
 * CPU atomics on the 4 bytes, here or in the data server: atomic against
 * each other, and they touch nothing else.
 */
#include <stdint.h>

#include "armci.h"
#include "core/error.h"
#include "api/profiling.h"
#include "transport/atomic_path.h"
#include "transport/remote.h"
#include "core/rmw_kernels.h"
#include "core/runtime.h"
#include "api/segment.h"
#include "core/mutant.h"
#include "verbs/atomics.h"

/* Whether this Rmw goes through the device's atomics (see the top of the file). */
static bool by_device(const struct target *t, size_t size)
{
    if (size != sizeof(long))
        return false;
#if ARMCI_MUTANT_IS(rmw_same_node_cpu)
    if (t->local)
        return false; /* the bug: CPU atomics beside the device's */
#endif
    return rmw_route == RMW_ROUTE_DEVICE || (rmw_route == RMW_ROUTE_CPU_DEVICE && !t->local);
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
    long old = by_device(&t, size) ? atomic_rmw_long(&t, op, operand)
               : t.local           ? rmw_apply(op, t.local, operand)
                                   : remote_rmw(&t, op, operand);

    if (size == sizeof(int))
        *(int *)ploc = (int)old;
    else
        *(long *)ploc = old;
    return 0;
}
PROFILED(Rmw)
