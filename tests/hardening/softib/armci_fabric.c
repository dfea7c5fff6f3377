/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * armci_fabric names|abort: an ARMCI job that moves data between virtual
 * nodes (so every process is on softib), then prints the fabric file each
 * process is on ("rank R fabric PATH"). names: ends normally. abort: the
 * last rank calls MPI_Abort while the others wait, so that they are killed
 * without leaving the fabric.
 */
#include <armci.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define LEN 4096

static void fabric_path(char *path, size_t len)
{
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");

    snprintf(path, len, "none");
    while (f && fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "/dev/shm/softib-fabric-");

        if (p) {
            p[strcspn(p, " \n")] = '\0';
            snprintf(path, len, "%s", p);
            break;
        }
    }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    bool abort_job = argc > 1 && !strcmp(argv[1], "abort");
    unsigned char local[LEN];
    char path[256];
    void **seg;
    int me, n, peer;

    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    n = armci_msg_nproc();
    seg = calloc((size_t)n, sizeof(*seg));
    CHECK(seg && ARMCI_Malloc(seg, LEN) == 0, "ARMCI_Malloc");
    peer = (me + n / 2) % n; /* another virtual node when there are two */
    fill_pattern(local, LEN, (uint64_t)me + 1);
    CHECK(ARMCI_Put(local, seg[peer], LEN, peer) == 0, "ARMCI_Put");
    ARMCI_Fence(peer);
    ARMCI_Barrier();
    CHECK(check_pattern(seg[me], LEN, (uint64_t)((me - n / 2 + n) % n) + 1) < 0, "the put arrived");
    fabric_path(path, sizeof(path));
    printf("rank %d fabric %s\n", me, path);
    fflush(stdout);
    ARMCI_Barrier();
    if (abort_job) {
        if (me == n - 1)
            MPI_Abort(MPI_COMM_WORLD, 3);
        sleep(60); /* killed by the launcher */
    }
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
