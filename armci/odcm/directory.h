/*
 * Where processes' UD endpoints are (and nodes' data-server UD endpoints),
 * kept so that what a process holds grows with the peers it talks to, not
 * with the job. At init the entries are gathered by holders: every
 * span-th node keeps the entries of its span of nodes, and every node keeps
 * the holders' and its own, in one block of its shared memory its master
 * writes. The span is as small as ARMCI_DIRECTORY_BYTES of holders'
 * entries a node allows (44 M / that, rounded up): 1, every node a holder
 * and nothing asked, up to 1489 nodes by default. Any other entry is asked of its holder's data
 * server over the UD channel (CM_LOOKUP, answered CM_ENTRY) at first use and kept: the clients'
 * side for the data servers they send to, the data server's side for the clients that send to it
 * (each under its own thread).
 *
 * An answer is believed only from the holder of the rank it names (its
 * data server's UD QP, from the block): nobody else can point a peer of
 * ours at another QP. A lookup lost is asked again by the next call that
 * needs it (the protocols above retransmit); a client whose holder answers
 * nothing within ARMCI_CONNECT_TIMEOUT ends the job naming it.
 */
#ifndef ARMCI_ODCM_DIRECTORY_H
#define ARMCI_ODCM_DIRECTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odcm/ud.h"
#include "verbs/device.h"

/*
 * Before directory_publish: the QP numbers of this process's UD data
 * endpoint and, on a master, of its data server's (the hybrid data path).
 * Every process offers them or none does (ARMCI_HYBRID agrees across ranks).
 */
void directory_offer_client_data(uint32_t qpn);
void directory_offer_server_data(uint32_t qpn);

/* Who asks: the clients (their lookups go through `via`, ondemand.c's channel) or the node's
 * data server (cm_server.c's). Each side keeps what it learns; set before publishing. */
enum dir_side { DIR_CLIENTS, DIR_SERVER };
void directory_attach(enum dir_side side, struct ud_endpoint *via);

/* Collective: publishes my client UD address and, if I am a master, my data server's UD QP
 * number (0 otherwise). */
void directory_publish(struct verbs_addr client_ud, uint32_t server_ud_qpn);
void directory_fini(void);

/*
 * The address of a node's data server (connections, or the hybrid data path), for the clients;
 * of a rank's client endpoint (connections, or data), for the data server. False while it is
 * not known: then it is asked of its holder (again if the last ask is older than
 * DIR_ASK_INTERVAL), and the caller tries later.
 */
bool directory_server(int node, struct verbs_addr *out);
bool directory_server_data(int node, struct verbs_addr *out);
bool directory_client(int rank, struct verbs_addr *out);
bool directory_client_data(int rank, struct verbs_addr *out);
/* The same for the clients without asking (to check who sent an answer: a stranger's
 * datagram costs no lookup). */
bool directory_known_server(int node, struct verbs_addr *out);
bool directory_known_server_data(int node, struct verbs_addr *out);

/* The data server's side: keeps (a copy of) a datagram of `rank`, whose entry is being
 * asked, and hands it to replay once it is known (at most a few a rank; more are dropped,
 * and their senders retransmit). */
typedef void (*dir_replay_fn)(const struct ud_sender *from, const void *bytes, size_t len);
void directory_park(int rank, const struct ud_sender *from, const void *bytes, size_t len,
                    dir_replay_fn replay);

/* A CM_LOOKUP or CM_ENTRY that came to a side's channel: answered (a holder's data server),
 * or believed if it came from the rank's holder. For an entry, the rank it names (its node's
 * server, for the clients' side), or -1 when it was refused or not for us. */
int directory_on_message(enum dir_side side, const struct ud_sender *from, const struct cm_msg *m);

/* Bytes of the node's block this process counts (a k-th of it), plus what its sides learned;
 * that share alone; the node's block (tests); lookups this process has sent; entries a side
 * has learned. */
long directory_bytes(void);
long directory_shared_bytes(void);
long directory_node_bytes(void);
long directory_lookups(void);
long directory_learned(enum dir_side side);

#endif
