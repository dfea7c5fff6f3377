/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains: an id unique across the fabric, and a count of the
 * MRs, QPs, SRQs and AHs that use one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "sib.h"

struct ibv_pd *sib_alloc_pd(struct ibv_context *context)
{
    struct sib_context *ctx = sib_ctx(context);
    struct sib_pd *pd;
    uint32_t n;

    if (!ctx)
        return sib_null(EINVAL);
    pd = calloc(1, sizeof(*pd));
    if (!pd)
        return sib_null(ENOMEM);
    pthread_mutex_lock(&ctx->lock);
    n = ++ctx->next_pd;
    pthread_mutex_unlock(&ctx->lock);
    /* unique across the fabric: context slot, its generation, a counter */
    pd->id = ((uint64_t)ctx->slot << 52) | ((uint64_t)(ctx->gen & 0xfffff) << 32) | n;
    pd->ibpd.context = context;
    pd->ibpd.handle = n;
    sib_obj_init(&pd->o, SIB_K_PD, pd);
    return &pd->ibpd;
}

int sib_dealloc_pd(struct ibv_pd *ibpd)
{
    struct sib_pd *pd = sib_pd(ibpd);

    if (!pd)
        return sib_err(EINVAL);
    if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE))
        return sib_err(EBUSY);
    sib_obj_bury(sib_ctx(ibpd->context), &pd->o);
    return 0;
}
