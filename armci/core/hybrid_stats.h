/*
 * Counters of the hybrid UD data path, kept by the client (transport/dgram.c)
 * and the data server (dataserver/dgram_server.c) and printed by the
 * connection report. The server's are written by its thread only and read
 * after it has stopped.
 */
#ifndef ARMCI_CORE_HYBRID_STATS_H
#define ARMCI_CORE_HYBRID_STATS_H

struct hybrid_stats {
    /* client */
    long ud_ops;          /* operations that went over UD */
    long rc_ops;          /* operations to other nodes that went over RC */
    long promotions;      /* RC connections opened because a node's UD traffic earned one */
    long retransmissions; /* request datagrams sent again after a timeout */
    long answers_late;    /* answers to requests answered already (duplicates, retransmissions) */
    long nodes;           /* nodes sent datagrams to (each keeps a window: transport/dgram.c) */
    /* server */
    long executed;       /* requests executed */
    long duplicates;     /* older requests answered from the cache (or, gets, read again) */
    long early;          /* requests ahead of the expected number, dropped */
    long answers_unsent; /* answers dropped for want of a send buffer */
    long refused;        /* datagrams refused as malformed or forged */
};

extern struct hybrid_stats hybrid_stats;

#endif
