/*
 * The data server's side of the hybrid UD data path (dgram_protocol.h): its
 * UD data endpoint, and per client the number it executes next and the
 * answers of the last window, so that a retransmitted request is answered
 * again but never executed twice. Runs on the server thread.
 */
#ifndef ARMCI_DATASERVER_DGRAM_SERVER_H
#define ARMCI_DATASERVER_DGRAM_SERVER_H

#include <stddef.h>

#include "core/config.h"

/* Receive buffers: enough for a burst from many clients; a datagram that finds none is lost
 * and retransmitted by its client. */
#define DGRAM_SERVER_RECV_BUFS 256
#define DGRAM_SERVER_SEND_BUFS 64

/* Bytes of one data datagram on this device: ARMCI_HYBRID_SIZE cut to the port's MTU. */
size_t dgram_datagram_bytes(void);

/* CQ entries the endpoint needs on the server's receive and send CQs (0 when off): twice its
 * buffers, since completions of before a reset of its QP may still be there (odcm/ud.c). */
static inline int dgram_server_recv_cq_entries(void)
{
    return cfg.hybrid_on ? 2 * DGRAM_SERVER_RECV_BUFS : 0;
}

static inline int dgram_server_send_cq_entries(void)
{
    return cfg.hybrid_on ? 2 * DGRAM_SERVER_SEND_BUFS : 0;
}

/* With the hybrid path on: the endpoint, on the server's CQs, offered to the directory. */
void dgram_server_init(void);
void dgram_server_fini(void);

#endif
