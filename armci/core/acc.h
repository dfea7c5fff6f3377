/*
 * Accumulate kernels: dst[i] += scale * src[i] for the six ARMCI types.
 * Used for same-node accumulates and by the data server for other nodes.
 */
#ifndef ARMCI_CORE_ACC_H
#define ARMCI_CORE_ACC_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of one element of an ARMCI_ACC_* type, 0 if the type is invalid. */
size_t acc_elem_size(int datatype);

/* Aborts (naming call) unless datatype is valid and bytes a multiple of its size. */
void acc_check(const char *call, int datatype, const void *scale, long bytes);

/* dst += scale * src over `bytes` bytes; no locking (the caller holds the lock). */
void acc_apply(int datatype, const void *scale, void *dst, const void *src, size_t bytes);

/* Same-node accumulate into process proc's memory: atomic per element via its node lock. */
void acc_local(int datatype, const void *scale, void *dst, const void *src, size_t bytes, int proc);

#endif
