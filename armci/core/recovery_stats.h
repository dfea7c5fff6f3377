/*
 * Counters of connection recovery (ARMCI_RECOVERY_TIMEOUT), kept by the
 * client (transport/recovery.c) and the data server (dataserver/) and
 * printed by the connection report. The server's are written by its thread
 * only and read after it has stopped.
 */
#ifndef ARMCI_CORE_RECOVERY_STATS_H
#define ARMCI_CORE_RECOVERY_STATS_H

struct recovery_stats {
    /* client */
    long breaks;    /* connections that broke */
    long recovered; /* ... and were set up anew */
    long replayed;  /* requests posted again on the new QPs */
    double slowest; /* seconds from a break to its recovery, the longest */
    /* server */
    long replaced;       /* server ends replaced by a client's new connection */
    long server_replays; /* requests recognised as replays: answered again, not applied */
    long served_broken;  /* requests received on an end that had broken, served all the same */
    long unserved;       /* requests a connection failed under (a pull): left for the replay */
};

extern struct recovery_stats recovery_stats;

#endif
