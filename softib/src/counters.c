/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Observability: per-process counters (kept per context in the fabric so
 * other processes can charge receiver-side events and softib-info can show
 * them) and a snapshot of the fabric's tables.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sib.h"

#define FIRST_COUNTER offsetof(struct softib_counters, contexts_opened)
#define NCOUNTERS     ((sizeof(struct softib_counters) - FIRST_COUNTER) / sizeof(uint64_t))

static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct softib_counters retired; /* contexts this process closed */
static pid_t retired_pid;

static void add(struct softib_counters *dst, const struct softib_counters *src)
{
    uint64_t *d = (uint64_t *)((char *)dst + FIRST_COUNTER);
    const uint64_t *s = (const uint64_t *)((const char *)src + FIRST_COUNTER);

    for (size_t i = 0; i < NCOUNTERS; i++)
        d[i] += __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

void sib_counters_retire(const struct sib_fctx *fc)
{
    pthread_mutex_lock(&retired_lock);
    if (retired_pid != getpid()) { /* inherited from our parent: not ours */
        memset(&retired, 0, sizeof(retired));
        retired_pid = getpid();
    }
    add(&retired, &fc->cnt);
    pthread_mutex_unlock(&retired_lock);
}

SIB_EXPORT int softib_get_counters(struct softib_counters *out)
{
    struct softib_counters sum;
    struct sib_context *ctx;
    size_t n;

    if (!out || out->size < FIRST_COUNTER)
        return EINVAL;
    memset(&sum, 0, sizeof(sum));
    pthread_mutex_lock(&retired_lock);
    if (retired_pid == getpid())
        add(&sum, &retired);
    pthread_mutex_unlock(&retired_lock);
    pthread_mutex_lock(&sib_open_lock);
    for (ctx = sib_open_list; ctx; ctx = ctx->next_open)
        if (ctx->pid == getpid())
            add(&sum, &ctx->f->cnt);
    pthread_mutex_unlock(&sib_open_lock);
    sum.qp_live_rc = sum.qp_created_rc - sum.qp_destroyed_rc;
    sum.qp_live_ud = sum.qp_created_ud - sum.qp_destroyed_ud;
    sum.version = SOFTIB_COUNTERS_VERSION;
    n = out->size < sizeof(sum) ? out->size : sizeof(sum);
    sum.size = (uint32_t)n;
    memcpy(out, &sum, n);
    return 0;
}

SIB_EXPORT int softib_fabric_stats(struct softib_fabric_stats *out)
{
    struct softib_fabric_stats st;
    const struct sib_fabric *f = &sib_fab;
    size_t n;

    if (!out || out->size < 2 * sizeof(uint32_t))
        return EINVAL;
    memset(&st, 0, sizeof(st));
    pthread_mutex_lock(&sib_open_lock);
    if (f->refs == 0 || f->pid != getpid()) {
        pthread_mutex_unlock(&sib_open_lock);
        return ENODEV;
    }
    sib_lock(&f->hdr->lock);
    st.contexts = sib_reclaim(&sib_fab);
    for (uint32_t i = 0; i < f->hdr->qp_window; i++) /* beyond: never handed out */
        st.qps += sib_fqp_at(f, i)->qpn != 0;
    for (uint32_t i = 0; i < f->hdr->cq_used; i++) /* likewise */
        st.cqs += sib_fcq_at(f, i)->in_use != 0;
    for (uint32_t i = 0; i < f->hdr->srq_used; i++)
        st.srqs += sib_fsrq_at(f, i)->in_use != 0;
    for (uint32_t i = 0; i < f->hdr->mr_used; i++)
        st.mrs += sib_fmr_at(f, i)->lkey != 0;
    st.heap_used = f->hdr->heap_used;
    st.heap_size = f->hdr->heap_end - f->hdr->heap_start;
    sib_unlock(&f->hdr->lock);
    pthread_mutex_unlock(&sib_open_lock);
    st.version = SOFTIB_FABRIC_STATS_VERSION;
    n = out->size < sizeof(st) ? out->size : sizeof(st);
    st.size = (uint32_t)n;
    memcpy(out, &st, n);
    return 0;
}
