/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Robust process-shared locks of the fabric: a process killed while holding
 * one does not wedge the rest. Also the MR lock, whose dead holder's
 * half-written slot is cleared. Calls nothing else of softib.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"

void sib_lock_init(struct sib_lock *l)
{
    pthread_mutexattr_t a;

    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&l->m, &a);
    pthread_mutexattr_destroy(&a);
}

void sib_lock(struct sib_lock *l)
{
    int rc = pthread_mutex_lock(&l->m);

    /* The holder died: what it protected is left as it was (rings only
     * publish an entry after writing it), so take it over. */
    if (rc == EOWNERDEAD)
        rc = pthread_mutex_consistent(&l->m);
    if (rc) {
        fprintf(stderr, "softib: fabric lock unusable (%s)\n", strerror(rc));
        abort();
    }
}

void sib_unlock(struct sib_lock *l)
{
    pthread_mutex_unlock(&l->m);
}

/* An odd counter under the MR lock: its writer died mid-update. The slot's
 * fields are not to be trusted, so its keys die with it. */
static void mr_repair(struct sib_fmr *m)
{
    if (__atomic_load_n(&m->seq, __ATOMIC_ACQUIRE) & 1)
        sib_fmr_clear(m);
}

void sib_mr_lock(struct sib_fabric *f)
{
    int rc = pthread_mutex_lock(&f->hdr->mr_lock.m);

    if (rc == EOWNERDEAD) {
        rc = pthread_mutex_consistent(&f->hdr->mr_lock.m);
        for (uint32_t i = 0; !rc && i < SIB_MAX_MR; i++)
            mr_repair(sib_fmr_at(f, i));
    }
    if (rc) {
        fprintf(stderr, "softib: fabric MR lock unusable (%s)\n", strerror(rc));
        abort();
    }
}

void sib_mr_unlock(struct sib_fabric *f)
{
    pthread_mutex_unlock(&f->hdr->mr_lock.m);
}

void sib_lock_lazy_init(struct sib_lock *l, uint32_t *ready)
{
    if (*ready)
        return;
    sib_lock_init(l);
    __atomic_store_n(ready, 1, __ATOMIC_RELEASE);
}
