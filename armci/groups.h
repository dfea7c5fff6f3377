/* Process groups (ARMCI_Group holds an MPI communicator and rank maps). */
#ifndef ARMCI_GROUPS_H
#define ARMCI_GROUPS_H

#include "armci.h"

/* Fills g with the world group (over the runtime's communicator). */
void groups_init_world(ARMCI_Group *g);
void groups_fini(void);

/* World rank of group member `rank`. */
int group_abs(const ARMCI_Group *g, int rank);

#endif
