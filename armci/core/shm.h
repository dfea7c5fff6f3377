/*
 * POSIX shared memory shared by the processes of one node. Objects are
 * unlinked as soon as every process has mapped them, so nothing is left in
 * /dev/shm even if the job is killed.
 */
#ifndef ARMCI_CORE_SHM_H
#define ARMCI_CORE_SHM_H

#include <mpi.h>
#include <stddef.h>

/* Called on the creator once every process of comm has mapped the object. */
typedef void (*shm_mapped_fn)(void *ctx, const char *name, size_t size);

/*
 * Collective over `comm` (processes of one node): rank 0 of comm creates an
 * object of `size` bytes named after `tag`, every process maps it, rank 0
 * runs `mapped` (if any: e.g. to let the node's data server map it too),
 * then the name is unlinked. Returns the local mapping, or NULL when size is 0.
 */
void *shm_map_collective(MPI_Comm comm, const char *tag, size_t size, shm_mapped_fn mapped,
                         void *ctx);

/*
 * Maps an existing, not yet unlinked object by name (for the data server).
 * Refuses objects of another owner or shorter than `size`; NULL and *err
 * (an errno value) on failure.
 */
void *shm_try_map_existing(const char *name, size_t size, int *err);

void shm_unmap(void *addr, size_t size);

#endif
