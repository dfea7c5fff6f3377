/*
 * Fault injection for the test suites: the few places where a test makes the
 * runtime misbehave on purpose (ARMCI_TEST_HOOKS, a bit set). They exist
 * only in builds that compile the test suites (-Dfault_injection=auto, the
 * default, with -Dtests=true) or ask for them (-Dfault_injection=true); a
 * library built to be installed (-Dtests=false) or with
 * -Dfault_injection=false has every point a constant false, compiled away.
 * The bits are listed in docs/ENVIRONMENT.md (ARMCI_TEST_HOOKS).
 */
#ifndef ARMCI_CORE_FAULT_H
#define ARMCI_CORE_FAULT_H

#include <stdbool.h>

#include "core/config.h"

enum fault {
    FAULT_SERVER_SILENT = 1 << 1,      /* data servers ignore connection requests */
    FAULT_BARRIER_WRAP = 1 << 2,       /* barrier counters start just below their limit */
    FAULT_SHM_PEER_DIES = 1 << 3,      /* a process dies while a new shared object has its name */
    FAULT_LINK_EVERY_PROCESS = 1 << 4, /* test point: every process asks its data server at init */
    FAULT_CLIENT_BREAKS = 1 << 5, /* a client moves a connection's QP to error every so often */
    FAULT_SERVER_BREAKS = 1 << 6, /* a data server does the same to its end of a connection */
    /* a data server loses a request its device received and acknowledged (as a QP replaced with
     * completions unpolled would), and its end of that connection breaks: the client's device
     * said the SEND went, and only a whole replay brings it (DESIGN.md 10.1, rule 5) */
    FAULT_SERVER_LOSES = 1 << 7,
    /* connection-message UD endpoints receive into buffers of a message's size, not the
     * port's MTU: a longer datagram fails its receive (the QP reset paths of ud.c, which
     * full-size buffers never take) */
    FAULT_UD_SMALL_BUFFERS = 1 << 8,
    /* as FAULT_SERVER_LOSES, but once, for the FAULT_UNLOCK_LOST_AT-th unlock request each
     * data server receives: the loss an unlock that is not waited for does not survive (found
     * only when it waits: a lost unlock costs about the RC timeout, ARMCI_IB_TIMEOUT) */
    FAULT_SERVER_LOSES_UNLOCKS = 1 << 9,
    /* with FAULT_SERVER_BREAKS: before each break the data server stops for 2 ms (as one
     * descheduled on a busy node), so requests pile up behind, and it counts its end broken
     * at once: they are served on an end that broke (DESIGN.md 10.1, rule 3) */
    FAULT_SERVER_BACKLOG = 1 << 10,
    /* the process writing a segment's block index for its node is killed halfway through */
    FAULT_INDEX_WRITER_DIES = 1 << 11,
    /* ARMCI_Malloc's last member finds every candidate address of a symmetric mapping taken
     * (the members fall back to mappings of their own), or only the first (they retry) */
    FAULT_SYMMETRIC_TAKEN = 1 << 12,
    FAULT_SYMMETRIC_FIRST_TAKEN = 1 << 13,
    /* the last node's data server finds the address where ARMCI_Malloc asks it to map a node
     * object taken, and maps it elsewhere (the segment keeps a server base per node) */
    FAULT_SERVER_ELSEWHERE = 1 << 14,
};

/* How often the break points above break a connection: every this many posts (client) or
 * requests served (server); prime, so that they fall at varying places of a pattern. */
#define FAULT_BREAK_EVERY    97
#define FAULT_UNLOCK_LOST_AT 5

static inline bool fault_injected(enum fault f)
{
#ifdef ARMCI_FAULT_INJECTION
    return (cfg.test_hooks & f) != 0;
#else
    (void)f;
    return false;
#endif
}

#endif
