/*
 * The bottom of the client side of the connection manager: the table of
 * this process's connections (one per node at most) and the life of one
 * connection object, from its QP in INIT to ready and destroyed. Both ways
 * of filling the table (cm_static.c, ondemand.c) build on it; the facade
 * (cm.c) decides when, and report.c is handed what it prints.
 */
#ifndef ARMCI_ODCM_CONN_TABLE_H
#define ARMCI_ODCM_CONN_TABLE_H

#include "core/intmap.h"
#include "odcm/cm_types.h"
#include "odcm/cm_server.h"
#include "verbs/device.h"
#include "verbs/rc_qp.h"

/* What cm_init was given. */
extern struct cm_client_env cm_env;

void conn_table_init(const struct cm_client_env *env);
/* Destroys every connection left and empties the table. */
void conn_table_fini(void);

/* A new connection object with its QP in INIT (not yet in the table). */
struct conn *client_conn_create(int node);
/* The capabilities asked for a client QP. */
struct rc_qp_caps client_conn_caps(void);
/* Creates c's QP and moves it to INIT. */
void client_conn_create_qp(struct conn *c);
/* Makes qp (in INIT, granted these caps) c's QP. */
void client_conn_adopt_qp(struct conn *c, struct ibv_qp *qp, const struct rc_qp_caps *granted);
/* c's QP broke: a new one (INIT) replaces it, with room for extra_wrs requests beyond c's send
 * queue depth (which stays what the transport accounts with); the broken one is kept in
 * c->broken_qp until client_conn_drop_broken_qp. */
void client_conn_replace_qp(struct conn *c, int extra_wrs);
void client_conn_drop_broken_qp(struct conn *c);
/* RTR/RTS towards the server's QP, with the server's initial credits. */
void client_conn_establish(struct conn *c, const struct verbs_addr *server, struct cm_terms terms);
/* The same once c's QP has been moved to RTS elsewhere (in the background). */
void client_conn_set_terms(struct conn *c, struct cm_terms terms);
/* Marks c ready: operations may be posted on it. */
void client_conn_ready(struct conn *c);

/* Registers c as the connection to its node (counts reopenings and the peak). */
void conn_table_insert(struct conn *c);
/* c's close is agreed: out of the table and destroyed. */
void conn_table_remove_closed(struct conn *c);
/* The connection to node, or NULL. */
struct conn *conn_table_find(int node);
/* The connection whose QP is qp, or NULL. */
struct conn *conn_table_find_qp(const struct ibv_qp *qp);
int conn_table_count(void);
/* Every connection, to walk with INTMAP_FOR_EACH (node -> struct conn). */
const struct intmap *conn_table_all(void);

/* Whether c may be closed now: ready, and its user has nothing on it. */
bool conn_table_closable(const struct conn *c);
/* The least recently used connection that may be closed now, NULL if none; *closing tells
 * whether one is closing already, *lock_waiting whether a thread waits on one for a lock. */
struct conn *conn_table_least_recently_used(bool *closing, bool *lock_waiting);

struct cm_stats conn_table_stats(void);
/* The cap gave way to a lock wait (cm.c make_room). */
void conn_table_count_over_cap(void);

#endif
