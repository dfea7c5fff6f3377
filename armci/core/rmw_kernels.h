/* Read-modify-write on memory this process (or its data server) can load/store. */
#ifndef ARMCI_CORE_RMW_KERNELS_H
#define ARMCI_CORE_RMW_KERNELS_H

#include <stddef.h>

/* Bytes the op works on (int or long), 0 for an invalid op. */
size_t rmw_operand_size(int op);

/* Atomically applies op to *target; returns the previous value. */
long rmw_apply(int op, void *target, long value);

#endif
