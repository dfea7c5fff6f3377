/*
 * The connection manager inside the data server: on-demand connection
 * messages arrive on the server's UD endpoint, whose completions share the
 * server's CQs, and are handled by the server thread.
 */
#ifndef ARMCI_ODCM_CM_SERVER_H
#define ARMCI_ODCM_CM_SERVER_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "../verbs/endpoint.h"

/* Entries the CM needs on the server's receive and send CQs. */
int cm_server_recv_cq_entries(void);
int cm_server_send_cq_entries(void);

void cm_server_init(struct endpoint *sends, struct endpoint *requests);
void cm_server_fini(void);
uint32_t cm_server_ud_qpn(void);

#endif
