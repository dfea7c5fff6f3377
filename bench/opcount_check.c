/*
 * The check of libarmci_opcount.so (bench/opcount.c): a fixed set of calls
 * from rank 0, run with the library preloaded; bench/opcount_check.sh
 * compares the rows it writes with what this program did. Two ranks on two
 * virtual nodes: rank 1 is remote, rank 0 itself is on the node.
 */
#include <armci.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    void **base = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(base, 4096);
    if (me == 0 && n > 1) {
        double local[64] = {0}, scale = 1.0;
        long old = 0;
        for (int i = 0; i < 3; i++) /* 3 remote puts of 64 B */
            ARMCI_Put(local, base[1], 64, 1);
        ARMCI_Put(local, base[0], 8, 0);           /* one on the node */
        int stride[1] = {128}, count[2] = {16, 4}; /* 4 rows of 16 B: 64 B, 4 pieces */
        ARMCI_GetS(base[1], stride, local, stride, count, 1, 1);
        ARMCI_GetS(base[1], stride, local, stride, count, 1, 1);
        void *src[2] = {local, local + 2}, *dst[2] = {base[1], (char *)base[1] + 512};
        armci_giov_t iov = {
            .src_ptr_array = src, .dst_ptr_array = dst, .bytes = 16, .ptr_array_len = 2};
        ARMCI_AccV(ARMCI_ACC_DBL, &scale, &iov, 1, 1);
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, (char *)base[1] + 1024, 1, 1);
        armci_hdl_t h;
        ARMCI_INIT_HANDLE(&h);
        ARMCI_NbGet(base[1], local, 8, 1, &h);
        ARMCI_Wait(&h);
    }
    ARMCI_Barrier();
    ARMCI_Free(base[me]);
    free(base);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
