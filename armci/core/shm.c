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

static void *map_fd(int fd, size_t size, const char *name)
{
    void *addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED)
        armci_die(NULL, "mmap of shared memory %s (%zu bytes) failed: %s", name, size,
                  strerror(errno));
    return addr;
}

void *shm_map_collective(MPI_Comm comm, const char *tag, size_t size, shm_mapped_fn mapped,
                         void *ctx)
{
    if (size == 0)
        return NULL;

    int rank;
    MPI_Comm_rank(comm, &rank);
    char name[96];
    snprintf(name, sizeof(name), "/armci-%s-%s", rt.job_id, tag);

    int fd = -1;
    int err = 0;
    armci_on_die(unlink_pending);
    snprintf(pending_name, sizeof(pending_name), "%s", name);
    if (rank == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0)
            err = errno;
        else if (ftruncate(fd, (off_t)size) != 0)
            err = errno;
        if (err && fd >= 0) {
            close(fd);
            shm_unlink(name);
        }
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, comm);
    if (err)
        armci_die(NULL, "cannot create shared memory %s of %zu bytes: %s (is /dev/shm full?)", name,
                  size, strerror(err));

    if (rank != 0) {
        if (fault_injected(FAULT_SHM_PEER_DIES))
            armci_die(NULL, "injected failure after shared memory %s was created", name);
        fd = shm_open(name, O_RDWR, 0600);
        if (fd < 0)
            armci_die(NULL, "cannot open shared memory %s: %s", name, strerror(errno));
    }
    void *addr = map_fd(fd, size, name);
    close(fd);

    /* Everyone has mapped it: the name is no longer needed. */
    MPI_Barrier(comm);
    if (rank == 0) {
        if (mapped)
            mapped(ctx, name, size);
        shm_unlink(name);
    }
    pending_name[0] = 0;
    return addr;
}

void *shm_try_map_existing(const char *name, size_t size, int *err)
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
    else if ((addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        *err = errno, addr = NULL;
    close(fd);
    return addr;
}

void shm_unmap(void *addr, size_t size)
{
    if (addr && size)
        munmap(addr, size);
}
