/* Inside the armci_msg_* layer (message.c, message_reduce.c). */
#ifndef ARMCI_API_MESSAGING_H
#define ARMCI_API_MESSAGING_H

#include <mpi.h>

#include "armci.h"

/* Set-up of the reductions (armci_msg_sel's MPI operation). */
void message_init(void);
void message_fini(void);

/*
 * Communicator for a scope within a group (NULL = world). MPI_COMM_NULL when
 * this process takes no part: a non-master in SCOPE_MASTERS returns at once,
 * as in GA's ARMCI (only masters call such collectives).
 */
MPI_Comm message_scope_comm(const char *call, int scope, const ARMCI_Group *group);

#endif
