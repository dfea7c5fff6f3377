/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric: one shared-memory file per job (knobs.c names it) holding
 * every table the device needs to be seen from all processes:
 * contexts (one LID each), QPs with their receive queues, CQ rings, SRQs
 * and MRs (fabric_layout.h). Locks are robust process-shared mutexes
 * (lock.h), so a process killed while holding one does not wedge the rest.
 * This header is fabric.c's: mapping, joining, leaving and sweeping the
 * file; it brings the layout and its helpers' headers along for the rest
 * of softib.
 *
 * Lock order: global -> QP -> SRQ -> CQ -> atomic; a context's event lock
 * and the MR lock are leaves. The execution engine never takes the global
 * lock.
 */
#ifndef SIB_FABRIC_H
#define SIB_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric_layout.h"
#include "heap.h"
#include "lock.h"
#include "proc.h"
#include "reclaim.h"

/* ---- fabric.c: the file ---- */

/* Map an existing fabric without joining it (softib-info). 0 or errno;
 * like joining, refuses files that are not ours alone (message on stderr). */
int sib_fabric_map(struct sib_fabric *f, const char *path, bool writable);
void sib_fabric_unmap(struct sib_fabric *f);

/* Join the fabric as a new context. 0 or errno; *slot is the context slot. */
int sib_fabric_join(struct sib_fabric *f, const char *path, uint32_t *slot);
/* Leave: release everything slot owns; the last one out unlinks the file. */
void sib_fabric_leave(struct sib_fabric *f, uint32_t slot);
/* Remove every fabric file of ours (but keep) on which no process is alive;
 * removed(path) is told of each. Returns how many. */
int sib_fabric_sweep(const char *keep, void (*removed)(const char *path));

#endif /* SIB_FABRIC_H */
