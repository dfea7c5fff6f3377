/*
 * The runtime's own memory, per process, by what holds it: each structure
 * reports what it allocates and frees (memstat_add), so that the connection
 * report can show what the runtime costs at this job size (docs/SCALING.md
 * has the model). User segments are not counted; registered buffers are
 * counted apart from the rest. Thread safe (the data server thread reports
 * too); a kind's peak is its high-water mark since ARMCI_Init.
 */
#ifndef ARMCI_CORE_MEMSTAT_H
#define ARMCI_CORE_MEMSTAT_H

#include <stddef.h>

enum mem_kind {
    MEM_SEGMENTS,     /* segment records and their per-node tables */
    MEM_INDEX,        /* the (process, address) -> block index */
    MEM_DIRECTORY,    /* every process's UD address */
    MEM_TOPOLOGY,     /* rank <-> node maps */
    MEM_GROUPS,       /* group rank maps */
    MEM_SYNC,         /* mutex and barrier tables */
    MEM_CONNECTIONS,  /* connection records and tables, client and data server */
    MEM_SEND_QUEUES,  /* send-queue rings of the connections */
    MEM_WORK,         /* records of operations in flight or queued */
    MEM_REPLY_SLOTS,  /* messages awaiting a reply, by token */
    MEM_DATAGRAM,     /* the UD data path: windows per node and their requests' data */
    MEM_BUF_BOUNCE,   /* registered buffers from here on: bounce buffers */
    MEM_BUF_SMALL,    /* small send buffers: requests' messages, small puts, atomics' results */
    MEM_BUF_RECV,     /* receive pools */
    MEM_BUF_SERVER,   /* the data server's reply buffers */
    MEM_BUF_DATAGRAM, /* the UD data path's send and receive buffers */
    MEM_BUF_CHANNEL,  /* the connection channel's (client and data server) */
    MEM_KINDS
};

#define MEM_FIRST_BUFFER MEM_BUF_BOUNCE

/* bytes > 0: allocated; < 0: freed. */
void memstat_add(enum mem_kind kind, long bytes);

long memstat_now(enum mem_kind kind);
long memstat_peak(enum mem_kind kind);
/* High-water marks of the sums: everything but the buffers, and the buffers. */
long memstat_runtime_peak(void);
long memstat_buffers_peak(void);

/* Short name of a kind ("segments", "index", ...). */
const char *memstat_name(enum mem_kind kind);

#endif
