/* Process groups (ARMCI_Group holds an MPI communicator and rank maps). */
#ifndef ARMCI_API_GROUPS_H
#define ARMCI_API_GROUPS_H

#include <stdbool.h>

#include "armci.h"

/* Fills g with the world group (over the runtime's communicator). */
void groups_init_world(ARMCI_Group *g);
void groups_fini(void);

/* World rank of group member `rank`. */
int group_abs(const ARMCI_Group *g, int rank);

/* False for the handle ARMCI_Group_create gives a process outside the group. */
bool group_is_member(const ARMCI_Group *g);
/* Aborts, naming call, unless g is non-NULL and the caller is a member. */
void group_require_member(const char *call, const ARMCI_Group *g);

/*
 * A member's communicator for SCOPE_NODE (the group's members on my node)
 * or SCOPE_MASTERS (each node's first member; MPI_COMM_NULL elsewhere).
 * Made on first use by the processes that are in it, then kept.
 */
MPI_Comm group_scope_comm(const ARMCI_Group *g, int scope);

#endif
