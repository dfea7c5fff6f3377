#include "core/node_shared.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/shm.h"
#include "core/topology.h"

struct node_shared *node_shm;
static size_t node_shm_size;

static struct node_lock *acc_locks(void)
{
    return (struct node_lock *)(node_shm + 1);
}

static size_t layout_size(int nprocs)
{
    return sizeof(struct node_shared) + (size_t)nprocs * sizeof(struct node_lock) +
           (size_t)nprocs * sizeof(struct node_flag);
}

struct node_flag *node_barrier_arrive(int local_index)
{
    struct node_flag *flags = (struct node_flag *)(acc_locks() + node_shm->nprocs);
    return &flags[local_index];
}

static void init_robust_mutex(pthread_mutex_t *m)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc)
        armci_die("ARMCI_Init", "pthread_mutex_init for a node lock failed: %s", strerror(rc));
}

void node_shared_init(void)
{
    int nprocs = topo_node_nprocs(topo.my_node);
    node_shm_size = layout_size(nprocs);
    char tag[32];
    snprintf(tag, sizeof(tag), "node%d", topo.my_node);
    node_shm = shm_map_collective(topo.node_comm, tag, node_shm_size, NULL, NULL);
    /* The master fills the block in before anyone else looks at it. */
    if (topo_is_master()) {
        node_shm->nprocs = nprocs;
        for (int i = 0; i < nprocs; i++)
            init_robust_mutex(&acc_locks()[i].mutex);
    }
    MPI_Barrier(topo.node_comm);
}

void node_shared_fini(void)
{
    shm_unmap(node_shm, node_shm_size);
    node_shm = NULL;
}

void node_acc_lock(int local)
{
    int rc = pthread_mutex_lock(&acc_locks()[local].mutex);
    if (rc == EOWNERDEAD) {
        /* A process died inside an accumulate; its job is going down anyway. */
        pthread_mutex_consistent(&acc_locks()[local].mutex);
    } else if (rc) {
        armci_die(NULL, "accumulate lock failed: %s", strerror(rc));
    }
}

void node_acc_unlock(int local)
{
    pthread_mutex_unlock(&acc_locks()[local].mutex);
}
