/*
 * ARMCI_Rmw on longs by the device's 8-byte atomics, over the client's RC
 * connection to the data server of the target's node (a loopback one for
 * the own node: verbs/atomics.h says when). One round trip; the server's
 * CPU does nothing. The old value lands in a registered bounce buffer.
 */
#ifndef ARMCI_TRANSPORT_ATOMIC_PATH_H
#define ARMCI_TRANSPORT_ATOMIC_PATH_H

#include "transport/target.h"

/*
 * ARMCI_FETCH_AND_ADD_LONG (adds value) or ARMCI_SWAP_LONG (stores value)
 * on the long at t; returns the old value. t->server_addr must be 8-byte
 * aligned (ARMCI_Rmw checks the caller's address; both views of a segment
 * are page-aligned mappings, so the server's address is aligned alike).
 */
long atomic_rmw_long(const struct target *t, int op, long value);

#endif
