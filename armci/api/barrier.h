/*
 * The job-wide barrier under ARMCI_Barrier (and armci_msg_barrier): flat
 * shared-memory flags within a node, RDMA recursive doubling between node
 * masters; ARMCI_BARRIER=mpi selects MPI_Barrier instead.
 */
#ifndef ARMCI_API_BARRIER_H
#define ARMCI_API_BARRIER_H

void barrier_init(void);
void barrier_fini(void);
void barrier_run(void);

#endif
