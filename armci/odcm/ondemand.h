/*
 * On-demand connection setup over the UD out-of-band channel (ODCM paper
 * Fig. 3 "serial" and Fig. 4 "overlap"), client side.
 */
#ifndef ARMCI_ODCM_ONDEMAND_H
#define ARMCI_ODCM_ONDEMAND_H

#include "odcm/cm_types.h"

void ondemand_init(void);
void ondemand_fini(void);
/* Starts connecting to node; the returned connection becomes READY later. */
struct conn *ondemand_start(int node);
/* Closes c (idle): DISC until the server answers, then c is destroyed
 * (conn_table_remove_closed). */
void ondemand_close(struct conn *c);
/* c's QP broke: a new pair is set up, with a new attempt number (cm.h: cm_conn_reconnect). */
void ondemand_reconnect(struct conn *c, int extra_wrs);
/* Drives setup: returns how many connections moved on without a completion of the caller's
 * (a QP made or moved to RTS in the background), so a waiter does not go to sleep on them. */
int ondemand_progress(void);
double ondemand_next_deadline(void);
/* Connections their server asked us to close that are not closed yet (cm.c closes them once
 * idle). */
int ondemand_close_asks(void);
/* Datagrams the client UD channel refused. */
long ondemand_refused(void);
long ondemand_ud_restarts(void);
/* A descriptor to sleep on while connections wait for their QPs (-1: none). */
int ondemand_wait_fd(void);

#endif
