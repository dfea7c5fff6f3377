/*
 * The request engine's client side (DESIGN.md 10.1, rule 1): one request
 * counter per node, for both carriers. Every data-server request to a node,
 * an RC SEND's or a datagram's, in any connection epoch, takes the node's
 * next number; the node's data server executes them in that order
 * (dataserver/engine.h). A node's traffic changes carrier only once the
 * other carrier's requests are answered, so each carrier's numbers are
 * consecutive runs: an RC request is numbered only when no datagram to the
 * node is unanswered (RC cannot be sent again at will; a datagram can).
 */
#ifndef ARMCI_TRANSPORT_NUMBERING_H
#define ARMCI_TRANSPORT_NUMBERING_H

#include <stdbool.h>
#include <stdint.h>

/* The number of the next request to node (0, 1, 2, ...), taken. */
uint64_t numbering_next(int node);

/* Whether datagrams to node are unanswered: the UD path tells (numbering_set_ud_query). */
bool numbering_ud_busy(int node);
void numbering_set_ud_query(bool (*busy)(int node));

void numbering_fini(void);

#endif
