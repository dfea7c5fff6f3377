/*
 * ARMCI_Put_flag / ARMCI_PutS_flag: the flag is written only after the
 * data is complete at the target. A third process polls the flag (with
 * one-sided gets from the target) and, as soon as it sees it, reads the
 * data back: it must always be complete.
 * Usage: test_flag [rounds]; 3 or more processes.
 */
#include <mpi.h>
#include <sched.h>
#include <string.h>

#include "testutil.h"

enum { DATA = 48 * 1024, ROWS = 96, ROW = 300, PITCH = 512 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    CHECK(n >= 3, "needs a writer, a target and an observer");
    int writer = 0, target = n - 1, observer = n / 2;

    void **mem = malloc(sizeof(void *) * n);
    ARMCI_Malloc(mem, DATA + 64);
    memset(mem[me], 0, DATA + 64);
    unsigned char *buf = malloc(DATA), *back = malloc(DATA);
    ARMCI_Barrier();
    int *flag = (int *)((char *)mem[target] + DATA);

    for (int r = 1; r <= rounds; r++) {
        bool strided = r % 2 == 0;
        if (me == writer) {
            fill_pattern(buf, DATA, (uint64_t)r);
            if (strided) {
                int count[2] = {ROW, ROWS}, stride[1] = {PITCH};
                ARMCI_PutS_flag(buf, stride, mem[target], stride, count, 1, flag, r, target);
            } else {
                ARMCI_Put_flag(buf, mem[target], DATA, flag, r, target);
            }
        } else if (me == observer) {
            while (ARMCI_GetValueInt(flag, target) != r)
                sched_yield();
            ARMCI_Get(mem[target], back, DATA, target);
            fill_pattern(buf, DATA, (uint64_t)r);
            if (strided) {
                for (int row = 0; row < ROWS; row++)
                    CHECK(memcmp(back + row * PITCH, buf + row * PITCH, ROW) == 0,
                          "round %d: row %d not complete when the flag was seen", r, row);
            } else {
                long bad = check_pattern(back, DATA, (uint64_t)r);
                CHECK(bad < 0, "round %d: byte %ld not complete when the flag was seen", r, bad);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);
    free(back);
    ARMCI_Free(mem[me]);
    free(mem);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
