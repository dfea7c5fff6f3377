/*
 * Process-wide runtime state: who we are in the job and whether ARMCI is up.
 * Owned by init.c; everything else reads it.
 */
#ifndef ARMCI_CORE_RUNTIME_H
#define ARMCI_CORE_RUNTIME_H

#include <mpi.h>
#include <stdbool.h>

#include "armci.h"

struct runtime {
    bool initialized;
    bool finalized;
    bool we_initialized_mpi; /* MPI_Init was ours, so MPI_Finalize is ours too */
    int thread_level;        /* MPI_THREAD_* granted */
    MPI_Comm comm;           /* private duplicate of the job's communicator */
    int me;
    int nprocs;
    char job_id[24]; /* unique per job: names shared-memory objects */
    ARMCI_Group world_group;
    ARMCI_Group default_group;
};

extern struct runtime rt;

/* Aborts with a clear message when ARMCI is not initialised. */
void rt_require_init(const char *call);
/* Aborts unless 0 <= proc < nprocs. */
void check_proc(const char *call, const char *arg, int proc);

#endif
