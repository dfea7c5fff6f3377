/*
 * Open MPI's asynchronous progress thread, emptied before MPI_Finalize.
 *
 * Open MPI 4.x (ORTE) runs PMIx event callbacks on its "OPAL-wide async
 * progress thread": the pmix component (mca_pmix_ext3x.so / pmix3x) queues
 * them there (process_event) from the thread PMIx delivers them on. MPI_Init
 * raises one itself (the PMIX_MODEL_DECLARED event of
 * ompi_interlib_declare). At MPI_Finalize, ess/pmi's rte_finalize closes the
 * pmix framework (dlclose of the component) *before* it stops that thread; a
 * callback still queued then runs in unmapped code: SIGSEGV after the job's
 * work is done (Debian 12's Open MPI 4.1.4: at the component's base +
 * 0x56f0, "...6f0"). It stays queued only when the thread gets no CPU from
 * MPI_Init to MPI_Finalize, which on a loaded, oversubscribed host (4 ranks
 * on 2 cores beside other jobs) happens about once in 500 short runs.
 * Unfixed up to Open MPI 4.1.8.
 *
 * mpi_async_drain queues a callback of ours behind whatever that thread
 * still has to run (its event base is FIFO) and waits until it has run, so
 * nothing of the component is left for after the dlclose. Any other MPI, or
 * an Open MPI without that thread's entry points: nothing to do.
 */
#ifndef ARMCI_CORE_MPI_ASYNC_H
#define ARMCI_CORE_MPI_ASYNC_H

/* Before MPI_Finalize, with MPI still initialised; from the thread that finalises. */
void mpi_async_drain(void);

#endif
