/*
 * ARMCI locks are FIFO across nodes: with rank 0 holding a mutex hosted by
 * the last rank, ranks 1..n-1 queue up one after another (each waits until
 * the previous one's ticket is taken); after rank 0 releases, they must
 * acquire in exactly that order, whether they are on the host's node or
 * not.
 */
#include <mpi.h>
#include <sched.h>
#include <string.h>

#include "api/mutex.h"
#include "testutil.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc(), host = n - 1;
    void **order = malloc(sizeof(void *) * n);
    ARMCI_Malloc(order, sizeof(int) * (n + 1));
    memset(order[me], 0, sizeof(int) * (n + 1));
    ARMCI_Create_mutexes(1);
    ARMCI_Barrier();

    for (int round = 0; round < 3; round++) {
        if (me == 0)
            ARMCI_Lock(0, host);
        long base = 0;
        if (me == 0)
            base = mutex_tickets_taken(0, host) - 1; /* my ticket */
        armci_msg_bcast(&base, sizeof(base), 0);
        /* Queue up in rank order: rank k takes ticket base + k. */
        while (me > 0 && mutex_tickets_taken(0, host) != base + me)
            sched_yield();
        if (me > 0) {
            ARMCI_Lock(0, host);
            int slot;
            ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &slot, order[host], 1, host);
            ARMCI_PutValueInt(me, (int *)order[host] + 1 + slot, host);
            ARMCI_Fence(host);
            ARMCI_Unlock(0, host);
        } else {
            while (mutex_tickets_taken(0, host) != base + n)
                sched_yield();
            ARMCI_Unlock(0, host);
        }
        ARMCI_Barrier();
        if (me == host) {
            int *seen = order[host];
            CHECK(seen[0] == n - 1, "round %d: %d acquisitions recorded", round, seen[0]);
            for (int k = 1; k < n; k++)
                CHECK(seen[k] == k, "round %d: acquisition %d was by rank %d, expected rank %d",
                      round, k, seen[k], k);
            seen[0] = 0;
        }
        ARMCI_Barrier();
    }
    ARMCI_Destroy_mutexes();
    ARMCI_Free(order[me]);
    free(order);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
