/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The object base, at the bottom of softib: this process's fabric and its
 * open contexts, the header every local object starts with and the
 * graveyard of destroyed ones, errno helpers. Calls nothing else of softib.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "sib.h"

struct sib_fabric sib_fab = {.fd = -1};
pthread_mutex_t sib_open_lock = PTHREAD_MUTEX_INITIALIZER;
struct sib_context *sib_open_list;

void *sib_null(int err)
{
    errno = err;
    return NULL;
}

int sib_err(int err)
{
    errno = err;
    return err;
}

void sib_obj_init(struct sib_obj *o, enum sib_kind kind, void *mem)
{
    o->magic = SIB_LIVE;
    o->kind = kind;
    o->next_dead = NULL;
    o->mem = mem;
}

void sib_obj_bury(struct sib_context *ctx, struct sib_obj *o)
{
    struct sib_obj *evicted = NULL;

    pthread_mutex_lock(&ctx->lock);
    o->magic = SIB_DEAD;
    o->next_dead = NULL;
    if (ctx->grave_newest)
        ctx->grave_newest->next_dead = o;
    else
        ctx->grave_oldest = o;
    ctx->grave_newest = o;
    if (++ctx->graves > SIB_GRAVEYARD_MAX) {
        evicted = ctx->grave_oldest;
        ctx->grave_oldest = evicted->next_dead;
        ctx->graves--;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (evicted)
        free(evicted->mem);
}

void sib_ctx_pending_add(struct sib_context *ctx, int n)
{
    __atomic_fetch_add(&ctx->pending, (uint32_t)n, __ATOMIC_RELEASE);
}
