/*
 * Where every process's UD endpoint is (and every node's data-server UD
 * endpoint): gathered once at init and kept once per node, in a block of the
 * node's shared memory its master writes and every process of it reads (the
 * tables are the same for all of them). Per process
 * only its QP number (4 bytes) is its own; the port (LID, GID) belongs to
 * the host's HCA and is kept per node, unless processes of one node show
 * different ports (softib gives every process its own: then the LID, 2 bytes,
 * on InfiniBand, or the GID on RoCE, is kept per process). Of a GID, only
 * the bytes after the job's common prefix are kept per node (or process):
 * none on InfiniBand, where GIDs are unused and 0; 4 for RoCE v2's
 * IPv4-mapped ones.
 */
#ifndef ARMCI_ODCM_DIRECTORY_H
#define ARMCI_ODCM_DIRECTORY_H

#include <stdint.h>

#include "verbs/device.h"

/*
 * Before directory_publish: the QP numbers of this process's UD data
 * endpoint and, on a master, of its data server's (the hybrid data path).
 * Every process offers them or none does (ARMCI_HYBRID agrees across ranks).
 */
void directory_offer_client_data(uint32_t qpn);
void directory_offer_server_data(uint32_t qpn);

/* Collective: publishes my client UD address and, if I am a master, my data server's UD QP
 * number (0 otherwise). */
void directory_publish(struct verbs_addr client_ud, uint32_t server_ud_qpn);
void directory_fini(void);

struct verbs_addr directory_server(int node);
struct verbs_addr directory_client(int rank);
/* The UD data endpoints (directory_offer_data): same ports, their own QP numbers. */
struct verbs_addr directory_server_data(int node);
struct verbs_addr directory_client_data(int rank);

/* Bytes of the node's directory this process counts (a k-th of it), and the whole (tests). */
long directory_bytes(void);
long directory_node_bytes(void);

#endif
