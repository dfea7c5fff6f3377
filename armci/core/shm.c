#include "core/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fault.h"
#include "core/runtime.h"

/*
 * The object being created, between shm_open(O_CREAT) and the unlink after
 * the barrier: every process of the node knows the name, and whichever of
 * them ends the job with an error in that window unlinks it on the way out.
 */
static char pending_name[96];

static void unlink_pending(void)
{
    if (pending_name[0])
        shm_unlink(pending_name);
    pending_name[0] = 0;
}

/* Kernels before 4.17 do not know the flag and take the address as a hint: shm_map_at checks
 * where the mapping landed. */
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

void shm_create(MPI_Comm comm, const char *tag, size_t size, struct shm_object *obj)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    *obj = (struct shm_object){.fd = -1, .size = size};
    snprintf(obj->name, sizeof(obj->name), "/armci-%s-%s", rt.job_id, tag);

    int err = 0;
    armci_on_die(unlink_pending);
    snprintf(pending_name, sizeof(pending_name), "%s", obj->name);
    if (rank == 0) {
        obj->fd = shm_open(obj->name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (obj->fd < 0)
            err = errno;
        else if (ftruncate(obj->fd, (off_t)size) != 0)
            err = errno;
        if (err && obj->fd >= 0) {
            close(obj->fd);
            shm_unlink(obj->name);
        }
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, comm);
    if (err)
        armci_die(NULL, "cannot create shared memory %s of %zu bytes: %s (is /dev/shm full?)",
                  obj->name, size, strerror(err));

    if (rank != 0) {
        if (fault_injected(FAULT_SHM_PEER_DIES))
            armci_die(NULL, "injected failure after shared memory %s was created", obj->name);
        obj->fd = shm_open(obj->name, O_RDWR, 0600);
        if (obj->fd < 0)
            armci_die(NULL, "cannot open shared memory %s: %s", obj->name, strerror(errno));
    }
}

/* fd's first size bytes at `at` exactly, replacing nothing; MAP_FAILED if that range is taken
 * (or an old kernel placed it elsewhere, undone). */
static void *map_exactly(int fd, size_t size, void *at)
{
    void *addr = mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (addr != MAP_FAILED && addr != at) { /* an old kernel's hint, not honoured */
        munmap(addr, size);
        return MAP_FAILED;
    }
    return addr;
}

void *shm_map_at(const struct shm_object *obj, void *at)
{
    if (at) {
        void *addr = map_exactly(obj->fd, obj->size, at);
        return addr == MAP_FAILED ? NULL : addr;
    }
    void *addr = mmap(NULL, obj->size, PROT_READ | PROT_WRITE, MAP_SHARED, obj->fd, 0);
    if (addr == MAP_FAILED)
        armci_die(NULL, "mmap of shared memory %s (%zu bytes) failed: %s", obj->name, obj->size,
                  strerror(errno));
    return addr;
}

void shm_publish(MPI_Comm comm, struct shm_object *obj, shm_mapped_fn mapped, void *ctx)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    close(obj->fd);
    obj->fd = -1;
    /* Everyone has mapped it: the name is no longer needed. */
    MPI_Barrier(comm);
    if (rank == 0) {
        if (mapped)
            mapped(ctx, obj->name, obj->size);
        shm_unlink(obj->name);
    }
    pending_name[0] = 0;
}

void *shm_map_collective(MPI_Comm comm, const char *tag, size_t size, shm_mapped_fn mapped,
                         void *ctx)
{
    if (size == 0)
        return NULL;
    struct shm_object obj;
    shm_create(comm, tag, size, &obj);
    void *addr = shm_map_at(&obj, NULL);
    shm_publish(comm, &obj, mapped, ctx);
    return addr;
}

uintptr_t shm_vacant_address(size_t size)
{
    void *addr = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (addr == MAP_FAILED)
        return 0;
    munmap(addr, size);
    return (uintptr_t)addr;
}

bool shm_occupy(void *at, size_t size)
{
    void *addr =
        mmap(at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (addr != MAP_FAILED && addr != at)
        munmap(addr, size);
    return addr == at;
}

/* fd's first size bytes at `wanted` exactly if that range is free (nothing is replaced), else
 * where the kernel chooses; MAP_FAILED if neither. */
static void *map_wanted(int fd, size_t size, void *wanted)
{
    void *addr = wanted ? map_exactly(fd, size, wanted) : MAP_FAILED;
    if (addr != MAP_FAILED)
        return addr;
    return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

void *shm_try_map_existing(const char *name, size_t size, void *wanted, int *err)
{
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0600);
    if (fd < 0) {
        *err = errno;
        return NULL;
    }
    /* Mapping past the object's end would turn a later access into SIGBUS. */
    struct stat st;
    void *addr = NULL;
    if (fstat(fd, &st) != 0)
        *err = errno;
    else if (st.st_uid != geteuid() || (size_t)st.st_size < size)
        *err = st.st_uid != geteuid() ? EPERM : EINVAL;
    else if ((addr = map_wanted(fd, size, wanted)) == MAP_FAILED)
        *err = errno, addr = NULL;
    close(fd);
    return addr;
}

void shm_unmap(void *addr, size_t size)
{
    if (addr && size)
        munmap(addr, size);
}
