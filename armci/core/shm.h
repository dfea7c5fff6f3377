/*
 * POSIX shared memory shared by the processes of one node. Objects are
 * unlinked as soon as every process has mapped them, so nothing is left in
 * /dev/shm even if the job is killed.
 */
#ifndef ARMCI_CORE_SHM_H
#define ARMCI_CORE_SHM_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * The same in three steps, for a caller that chooses where each process maps
 * the object (ARMCI_Malloc's symmetric mapping): shm_create (collective: rank
 * 0 creates it, every process opens it), shm_map_at as often as needed, then
 * shm_publish (collective: rank 0 runs `mapped` and removes the name, every
 * process closes its descriptor).
 */
struct shm_object {
    int fd;
    size_t size;
    char name[96];
};
void shm_create(MPI_Comm comm, const char *tag, size_t size, struct shm_object *obj);
/* Maps obj at `at` exactly, or NULL if some of that range is taken (nothing is replaced);
 * at NULL: where the kernel chooses (dies on failure). */
void *shm_map_at(const struct shm_object *obj, void *at);
void shm_publish(MPI_Comm comm, struct shm_object *obj, shm_mapped_fn mapped, void *ctx);

/* An address where `size` bytes were free a moment ago (taken from a real mapping, so it
 * lies where a sanitizer lets the application map), or 0. */
uintptr_t shm_vacant_address(size_t size);
/* Makes [at, at + size) inaccessible (tests: an address taken); false if any was taken. */
bool shm_occupy(void *at, size_t size);

/*
 * Maps an existing, not yet unlinked object by name (for the data server), at
 * `wanted` if that range is free (NULL: no wish), else where the kernel
 * chooses. Refuses objects of another owner or shorter than `size`; NULL and
 * *err (an errno value) on failure.
 */
void *shm_try_map_existing(const char *name, size_t size, void *wanted, int *err);

void shm_unmap(void *addr, size_t size);

#endif
