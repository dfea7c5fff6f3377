/* SPDX-License-Identifier: BSD-3-Clause */
/* The heap inside the fabric file (heap.c); global lock held. */
#ifndef SIB_HEAP_H
#define SIB_HEAP_H

#include "fabric_layout.h"

sib_off sib_heap_alloc(struct sib_fabric *f, uint64_t bytes);
void sib_heap_free(struct sib_fabric *f, sib_off off, uint64_t bytes);

#endif /* SIB_HEAP_H */
