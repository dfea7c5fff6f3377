/*
 * A job that allocates shared segments (and mutexes) and then ends in one of
 * three ways, for test_shm_cleanup.sh: normal, error (ARMCI_Error), kill
 * (rank 0 SIGKILLs itself while the others wait).
 */
#include <armci.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    const char *how = argc > 1 ? argv[1] : "normal";
    int me = armci_msg_me(), n = armci_msg_nproc();
    void **p = malloc(sizeof(void *) * n);
    ARMCI_Malloc(p, 1 << 16);
    ARMCI_Create_mutexes(1);
    ARMCI_Barrier();
    if (!strcmp(how, "error") && me == 0)
        ARMCI_Error("test: deliberate error", 5);
    if (!strcmp(how, "kill")) {
        if (me == 0)
            raise(SIGKILL);
        sleep(30); /* killed by mpirun once rank 0 is gone */
    }
    ARMCI_Destroy_mutexes();
    ARMCI_Free(p[me]);
    free(p);
    ARMCI_Finalize();
    return 0;
}
