/*
 * The connection manager's types that its own modules share with its facade
 * (cm.h): what its user lends it, and its statistics. A header with no .c
 * partner, so that the modules below the facade (conn_table, ondemand,
 * report) need not include the facade that calls them.
 */
#ifndef ARMCI_ODCM_CM_TYPES_H
#define ARMCI_ODCM_CM_TYPES_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "odcm/conn.h"
#include "verbs/endpoint.h"

/* What the connection manager's user (the transport) lends it for client QPs. */
struct cm_client_env {
    struct endpoint *cq; /* client QPs and the client UD channel complete here */
    struct ibv_srq *srq; /* client QPs receive replies here */
    uint32_t max_inline; /* inline data wanted on client QPs */
    /* A connection became ready (called from cm_progress, or during cm_init in static mode). */
    void (*on_ready)(struct conn *c);
    /* A connection is about to be destroyed: the user forgets what it keeps about it. */
    void (*on_destroy)(struct conn *c);
    /* A connection entered the table (before it can be ready): the user sets c->io. */
    void (*on_insert)(struct conn *c);
    /* Whether the user has anything on c, in flight or about to be: it must not be closed. */
    bool (*busy)(const struct conn *c);
    /* Whether a thread waits on c for a lock grant (the cap then gives way: cm.c make_room). */
    bool (*waits_for_lock)(const struct conn *c);
    /* c's server says its end broke: the user starts c's recovery (cm_conn_reconnect). */
    void (*on_broken)(struct conn *c);
};

/* Since init: connections closed to stay under the cap, reopened, and the most held at once. */
struct cm_stats {
    long closed;   /* connections this process closed to stay under the cap */
    long reopened; /* connections opened again to a node closed before */
    long peak;     /* most connections held at once */
    long over_cap; /* times the cap was exceeded because every connection waited on a lock */
};

#endif
