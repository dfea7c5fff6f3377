/*
 * The connection manager inside the data server: on-demand connection
 * messages arrive on the server's UD endpoint, whose completions share the
 * server's CQs, and are handled by the server thread.
 */
#ifndef ARMCI_ODCM_CM_SERVER_H
#define ARMCI_ODCM_CM_SERVER_H

#include <infiniband/verbs.h>
#include <stdint.h>

/* Entries the CM needs on the server's receive and send CQs. */
int cm_server_recv_cq_entries(void);
int cm_server_send_cq_entries(void);

void cm_server_init(struct ibv_cq *send_cq, struct ibv_cq *recv_cq);
void cm_server_fini(void);
uint32_t cm_server_ud_qpn(void);

/* A completion of the server's UD endpoint. */
void cm_server_handle_wc(const struct ibv_wc *wc);

#endif
