/* Shared by the connection manager's modules (client side). */
#ifndef ARMCI_ODCM_CM_INTERNAL_H
#define ARMCI_ODCM_CM_INTERNAL_H

#include "verbs/device.h"
#include "odcm/cm.h"
#include "odcm/cm_server.h"
#include "verbs/rc_qp.h"

/* What cm_init was given. */
extern struct cm_client_env cm_env;

/* A new connection object with its QP in INIT (not yet in the table). */
struct conn *conn_create(int node);
/* The capabilities asked for a client QP. */
struct rc_qp_caps conn_caps(void);
/* Creates c's QP and moves it to INIT. */
void conn_create_qp(struct conn *c);
/* Makes qp (in INIT, granted these caps) c's QP. */
void conn_adopt_qp(struct conn *c, struct ibv_qp *qp, const struct rc_qp_caps *granted);
/* RTR/RTS towards the server's QP, with the server's initial credits. */
void conn_establish(struct conn *c, const struct verbs_addr *server, struct cm_terms terms);
/* The same once c's QP has been moved to RTS elsewhere (in the background). */
void conn_set_terms(struct conn *c, struct cm_terms terms);
/* Marks c ready: operations may be posted on it. */
void conn_ready(struct conn *c);
void conn_destroy(struct conn *c);

/* Registers c as the connection to its node. */
void cm_table_insert(struct conn *c);
/* c's close is agreed: out of the table and destroyed. */
void cm_conn_closed(struct conn *c);
/* Starts closing one connection its server asked to close, if one is idle. */
void cm_close_if_asked(void);
/* Over the cap (it gave way to a lock wait): closes the least recently used idle one. */
void cm_shrink_to_cap(void);

/* Static mode: every process connected to every other node's server, over MPI. */
void cm_static_connect_all(void);

#endif
