#include "core/memstat.h"

#include <stdbool.h>

static long now[MEM_KINDS], peak[MEM_KINDS];
static long runtime_now, runtime_peak, buffers_now, buffers_peak;

static const char *const names[MEM_KINDS] = {
    [MEM_SEGMENTS] = "segments",
    [MEM_INDEX] = "index",
    [MEM_DIRECTORY] = "directory",
    [MEM_TOPOLOGY] = "topology",
    [MEM_GROUPS] = "groups",
    [MEM_SYNC] = "sync",
    [MEM_CONNECTIONS] = "conns",
    [MEM_SEND_QUEUES] = "sendq",
    [MEM_WORK] = "work",
    [MEM_REPLY_SLOTS] = "replies",
    [MEM_BUF_BOUNCE] = "buf_bounce",
    [MEM_BUF_SMALL] = "buf_small",
    [MEM_BUF_RECV] = "buf_recv",
    [MEM_BUF_SERVER] = "buf_server",
    [MEM_DATAGRAM] = "datagram",
    [MEM_BUF_DATAGRAM] = "buf_dgram",
    [MEM_BUF_CHANNEL] = "buf_channel",
};

/* Adds to *v and raises *high to the result if it is higher. */
static void add_and_raise(long *v, long *high, long bytes)
{
    long value = __atomic_add_fetch(v, bytes, __ATOMIC_RELAXED);
    long seen = __atomic_load_n(high, __ATOMIC_RELAXED);
    while (value > seen && !__atomic_compare_exchange_n(high, &seen, value, true, __ATOMIC_RELAXED,
                                                        __ATOMIC_RELAXED))
        ;
}

void memstat_add(enum mem_kind kind, long bytes)
{
    add_and_raise(&now[kind], &peak[kind], bytes);
    if (kind >= MEM_FIRST_BUFFER)
        add_and_raise(&buffers_now, &buffers_peak, bytes);
    else
        add_and_raise(&runtime_now, &runtime_peak, bytes);
}

long memstat_now(enum mem_kind kind)
{
    return __atomic_load_n(&now[kind], __ATOMIC_RELAXED);
}

long memstat_peak(enum mem_kind kind)
{
    return __atomic_load_n(&peak[kind], __ATOMIC_RELAXED);
}

long memstat_runtime_peak(void)
{
    return __atomic_load_n(&runtime_peak, __ATOMIC_RELAXED);
}

long memstat_buffers_peak(void)
{
    return __atomic_load_n(&buffers_peak, __ATOMIC_RELAXED);
}

const char *memstat_name(enum mem_kind kind)
{
    return names[kind];
}
