/*
 * ARMCI orders one origin's operations to one target: a get issued after a
 * put or accumulate sees it, and a later put wins over an earlier one,
 * whatever paths they take. Here the first operation goes through the data
 * server (packed strided put, vector put, strided and contiguous
 * accumulate) and the second by RDMA (contiguous get or put, or a vector
 * get of a few doubles: a chain of RDMA reads), which bypasses the server
 * and used to overtake it.
 *
 * Every rank works on a block of its right neighbour (another node when
 * ARMCI_NODE_SIZE=1), checking every byte after every step.
 */
#include <string.h>

#include "testutil.h"

#define N      512 /* doubles in the block */
#define ROUNDS 200

static double *expect_buf, *got;

static void check(const char *what, int round, const double *block, int peer)
{
    ARMCI_Get((void *)block, got, N * sizeof(double), peer);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == expect_buf[i], "%s, round %d: element %d is %g, expected %g", what, round,
              i, got[i], expect_buf[i]);
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    int me = armci_msg_me(), n = armci_msg_nproc();
    int peer = (me + 1) % n;
    void **bases = malloc(sizeof(void *) * (size_t)n);
    ARMCI_Malloc(bases, N * sizeof(double));
    double *block = bases[peer];
    expect_buf = malloc(N * sizeof(double));
    got = malloc(N * sizeof(double));
    double *src = malloc(N * sizeof(double));
    memset(bases[me], 0, N * sizeof(double));
    memset(expect_buf, 0, N * sizeof(double));
    ARMCI_Barrier();

    /* Rows of 2 doubles out of every 8: small chunks, packed for the data server. */
    int stride[1] = {8 * sizeof(double)}, count[2] = {2 * sizeof(double), N / 8};
    double one = 1.0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++)
            src[i] = r * 1000 + i;
        /* 1. packed strided put, then an RDMA get */
        ARMCI_PutS(src, stride, block, stride, count, 1, peer);
        for (int i = 0; i < N; i += 8)
            expect_buf[i] = src[i], expect_buf[i + 1] = src[i + 1];
        check("strided put then get", r, block, peer);

        /* 2. vector put of single doubles, then an RDMA get */
        void *vsrc[N / 8], *vdst[N / 8];
        for (int k = 0; k < N / 8; k++) {
            vsrc[k] = &src[8 * k + 3];
            vdst[k] = &block[8 * k + 3];
            expect_buf[8 * k + 3] = src[8 * k + 3];
        }
        armci_giov_t iov = {.src_ptr_array = vsrc,
                            .dst_ptr_array = vdst,
                            .bytes = sizeof(double),
                            .ptr_array_len = N / 8};
        ARMCI_PutV(&iov, 1, peer);
        check("vector put then get", r, block, peer);

        /* 3. strided accumulate, then an RDMA put over it, then a get: the put wins */
        ARMCI_AccS(ARMCI_ACC_DBL, &one, src, stride, block, stride, count, 1, peer);
        ARMCI_Put(src, block, 4 * sizeof(double), peer);
        for (int i = 0; i < N; i += 8)
            expect_buf[i] += src[i], expect_buf[i + 1] += src[i + 1];
        memcpy(expect_buf, src, 4 * sizeof(double));
        check("strided acc, put, get", r, block, peer);

        /* 4. contiguous accumulate, then an RDMA get */
        ARMCI_Acc(ARMCI_ACC_DBL, &one, src, block, N * sizeof(double), peer);
        for (int i = 0; i < N; i++)
            expect_buf[i] += src[i];
        check("acc then get", r, block, peer);

        /* 5. vector accumulate of 8 single doubles, then a vector get of them */
        void *asrc[8], *adst[8], *gdst[8];
        double back[8];
        for (int k = 0; k < 8; k++) {
            asrc[k] = &src[k];
            adst[k] = &block[61 * k + 5];
            gdst[k] = &back[k];
            expect_buf[61 * k + 5] += src[k];
        }
        armci_giov_t acc = {.src_ptr_array = asrc,
                            .dst_ptr_array = adst,
                            .bytes = sizeof(double),
                            .ptr_array_len = 8};
        armci_giov_t get = {.src_ptr_array = adst,
                            .dst_ptr_array = gdst,
                            .bytes = sizeof(double),
                            .ptr_array_len = 8};
        ARMCI_AccV(ARMCI_ACC_DBL, &one, &acc, 1, peer);
        ARMCI_GetV(&get, 1, peer);
        for (int k = 0; k < 8; k++)
            CHECK(back[k] == expect_buf[61 * k + 5],
                  "vector acc then vector get, round %d: "
                  "element %d is %g, expected %g",
                  r, 61 * k + 5, back[k], expect_buf[61 * k + 5]);
        check("vector acc then vector get", r, block, peer);
    }
    ARMCI_Barrier();
    TEST_DONE();
    ARMCI_Free(bases[me]);
    ARMCI_Finalize();
    return 0;
}
