/*
 * Static connection setup (the ODCM paper's "Original", ARMCI_CONNECT=static):
 * every process connected to every other node's data server at init.
 */
#ifndef ARMCI_ODCM_CM_STATIC_H
#define ARMCI_ODCM_CM_STATIC_H

/* Collective: fills the connection table, every connection ready, QP numbers over MPI. */
void cm_static_connect_all(void);

#endif
