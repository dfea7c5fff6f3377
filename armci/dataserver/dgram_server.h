/*
 * The data server's side of the hybrid UD data path (dgram_protocol.h): its
 * UD data endpoint, and per client the number it executes next and the
 * answers of the last window, so that a retransmitted request is answered
 * again but never executed twice. Runs on the server thread.
 */
#ifndef ARMCI_DATASERVER_DGRAM_SERVER_H
#define ARMCI_DATASERVER_DGRAM_SERVER_H

#include <stddef.h>

/* Bytes of one data datagram on this device: ARMCI_HYBRID_SIZE cut to the port's MTU. */
size_t dgram_datagram_bytes(void);

/* With the hybrid path on: the endpoint, on the server's CQs, offered to the directory. */
void dgram_server_init(void);
void dgram_server_fini(void);
/* While idle: the data endpoint's QP, as cm_server_check_channel. */
void dgram_server_check_channel(void);

#endif
