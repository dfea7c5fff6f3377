/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Robust process-shared locks (lock.c). Lock order: global -> QP -> SRQ ->
 * CQ -> atomic; a context's event lock and the MR lock are leaves.
 */
#ifndef SIB_LOCK_H
#define SIB_LOCK_H

#include "fabric_layout.h"

void sib_lock_init(struct sib_lock *l);
void sib_lock(struct sib_lock *l);
void sib_unlock(struct sib_lock *l);
void sib_lock_lazy_init(struct sib_lock *l, uint32_t *ready); /* global lock held */
/* The MR lock; an MR slot a dead holder left half-written is cleared. */
void sib_mr_lock(struct sib_fabric *f);
void sib_mr_unlock(struct sib_fabric *f);

#endif /* SIB_LOCK_H */
