/* SPDX-License-Identifier: BSD-3-Clause */
/* What contexts leave behind in the fabric (reclaim.c); global lock held. */
#ifndef SIB_RECLAIM_H
#define SIB_RECLAIM_H

#include "fabric_layout.h"

/* Release every QP, SRQ, CQ and MR of context slot, and the slot. */
void sib_ctx_release(struct sib_fabric *f, uint32_t slot);
/* Release resources of dead contexts. Returns live contexts. */
uint32_t sib_reclaim(struct sib_fabric *f);

#endif /* SIB_RECLAIM_H */
