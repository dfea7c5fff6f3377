/*
 * The smallest ARMCI program, built by tests/install/run.sh against an
 * installed libarmci with the README's link line: every process puts a
 * pattern into the next one's segment (on another node when
 * ARMCI_NODE_SIZE=1), and each checks what it received byte for byte.
 */
#include <armci.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BYTES = 4096 };

static unsigned char byte_from(int rank, int i)
{
    return (unsigned char)(rank * 31 + i * 7 + 1);
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    int me = armci_msg_me(), n = armci_msg_nproc();
    void **seg = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(seg, BYTES);

    unsigned char src[BYTES];
    for (int i = 0; i < BYTES; i++)
        src[i] = byte_from(me, i);
    ARMCI_Put(src, seg[(me + 1) % n], BYTES, (me + 1) % n);
    ARMCI_Barrier();

    const unsigned char *got = seg[me];
    int from = (me + n - 1) % n, bad = 0;
    for (int i = 0; i < BYTES; i++)
        bad += got[i] != byte_from(from, i);
    if (bad)
        fprintf(stderr, "install-app: rank %d: %d of %d bytes from rank %d differ\n", me, bad,
                BYTES, from);
    armci_msg_igop(&bad, 1, "+");
    if (me == 0 && !bad)
        printf("install-app: %d processes, ring of %d-byte puts verified\n", n, BYTES);
    ARMCI_Free(seg[me]);
    free(seg);
    ARMCI_Finalize();
    return bad ? 1 : 0;
}
