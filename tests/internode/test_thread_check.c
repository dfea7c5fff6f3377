/*
 * Threads under MPI_THREAD_MULTIPLE, before the runtime is thread safe.
 *
 *   serialized: two threads take turns (a pthread mutex) issuing puts and
 *               gets to another node; every byte must arrive, and the job
 *               must finish normally (SERIALIZED use is supported).
 *   concurrent: two threads issue gets to another node at the same time;
 *               the job must end with an error naming MPI_THREAD_MULTIPLE
 *               (run under expect-failure.sh), not hang or time out.
 *
 * Usage: test_thread_check serialized|concurrent   (2 processes, 2 nodes)
 */
#include <mpi.h>
#include <pthread.h>
#include <string.h>

#include "testutil.h"

#define BYTES     (256 * 1024)
#define ROUNDS    200
#define N_THREADS 2

static void **bases;
static int me, peer;
static bool serialize;
static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

/* Each thread owns one half of the segment on the peer and writes then reads it back. */
static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    size_t half = BYTES / N_THREADS;
    unsigned char *out = malloc(half), *in = malloc(half);
    CHECK(out && in, "out of memory");
    char *remote = (char *)bases[peer] + (size_t)id * half;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t seed = (uint64_t)me * 1000003 + (uint64_t)id * 1009 + (uint64_t)r;
        fill_pattern(out, half, seed);
        if (serialize)
            pthread_mutex_lock(&turn);
        ARMCI_Put(out, remote, (int)half, peer);
        ARMCI_Get(remote, in, (int)half, peer);
        if (serialize)
            pthread_mutex_unlock(&turn);
        long bad = check_pattern(in, half, seed);
        CHECK(bad < 0, "thread %d round %d: byte %ld differs after put+get", id, r, bad);
    }
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: test_thread_check serialized|concurrent");
    serialize = strcmp(argv[1], "serialized") == 0;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI granted thread level %d", provided);
    ARMCI_Init();
    me = armci_msg_me();
    int n = armci_msg_nproc();
    CHECK(n == 2 && !ARMCI_Same_node(1 - me), "needs 2 processes on 2 nodes (ARMCI_NODE_SIZE=1)");
    peer = 1 - me;
    bases = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(bases, BYTES);

    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(t[i], NULL);

    TEST_DONE();
    ARMCI_Free(bases[me]);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
