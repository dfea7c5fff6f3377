/*
 * The data server validates every request on its own: hand-made requests
 * (bypassing the client-side checks) naming memory outside any ARMCI
 * segment, or malformed, are answered with an error and change nothing,
 * and the server keeps serving. The requests go through transport/raw.h,
 * which returns a rejection's status instead of ending the job. 2 processes
 * on 2 nodes.
 */
#include <mpi.h>
#include <string.h>

#include "core/acc.h"
#include "transport/raw.h"
#include "api/segment.h"
#include "testutil.h"

enum { BLOCK = 4096 };

static struct ds_message base_request(enum ds_op op, const struct target *t, uint64_t len)
{
    struct ds_message rq = {.op = (uint8_t)op,
                            .origin = armci_msg_me(),
                            .addr = t->server_addr,
                            .len = len,
                            .target_local = 0,
                            .datatype = ARMCI_ACC_DBL};
    double one = 1.0;
    memcpy(rq.scale, &one, sizeof(one));
    return rq;
}

static int rejections; /* statuses other than DS_OK the server answered */

static void expect(const char *what, int got, int want)
{
    CHECK(got == want, "%s: server answered status %d, expected %d", what, got, want);
    rejections += got != DS_OK;
}

static void attack(int victim, void *block)
{
    struct target t;
    seg_resolve("test", "block", victim, block, BLOCK, &t);
    double payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    struct ds_message rq;

    rq = base_request(DS_ACC, &t, sizeof(payload));
    rq.addr = t.server_addr + BLOCK * 64; /* well past the segment */
    expect("acc past the segment", remote_raw_message(&t, &rq, payload, sizeof(payload), NULL),
           DS_EFAULT);
    rq.addr = 4096; /* nothing of ours */
    expect("acc to a wild address", remote_raw_message(&t, &rq, payload, sizeof(payload), NULL),
           DS_EFAULT);
    rq = base_request(DS_ACC, &t, sizeof(payload));
    rq.datatype = 99;
    expect("acc with a bad type", remote_raw_message(&t, &rq, payload, sizeof(payload), NULL),
           DS_EINVAL);
    rq = base_request(DS_ACC, &t, 4 * sizeof(payload));
    expect("acc longer than its payload",
           remote_raw_message(&t, &rq, payload, sizeof(payload), NULL), DS_EINVAL);
    rq = base_request(DS_ACC, &t, sizeof(payload));
    rq.target_local = 1000;
    expect("acc naming a process not on the node",
           remote_raw_message(&t, &rq, payload, sizeof(payload), NULL), DS_EINVAL);

    rq = base_request(DS_RMW, &t, sizeof(long));
    rq.rmw_op = ARMCI_FETCH_AND_ADD_LONG;
    rq.addr += 4; /* misaligned */
    expect("misaligned rmw", remote_raw_message(&t, &rq, NULL, 0, NULL), DS_EINVAL);
    rq = base_request(DS_RMW, &t, sizeof(long));
    rq.rmw_op = 42;
    expect("rmw with a bad op", remote_raw_message(&t, &rq, NULL, 0, NULL), DS_EINVAL);
    rq = base_request(DS_LOCK, &t, 64);
    rq.addr = 8192;
    expect("lock outside any segment", remote_raw_message(&t, &rq, NULL, 0, NULL), DS_EFAULT);

    rq = base_request(DS_GET_PACKED, &t, 64);
    rq.stride.levels = 12;
    expect("packed get with 12 levels", remote_raw_message(&t, &rq, NULL, 0, NULL), DS_EINVAL);
    rq = base_request(DS_PUT_PACKED, &t, 64);
    rq.stride = (struct ds_stride){.levels = 1, .count = {32, -2}, .stride = {64}};
    expect("packed put with a negative count", remote_raw_message(&t, &rq, payload, 64, NULL),
           DS_EINVAL);
    rq = base_request(DS_PUT_PACKED, &t, 64);
    rq.stride = (struct ds_stride){.levels = 1, .count = {32, 2}, .stride = {BLOCK}};
    expect("packed put running past the segment", remote_raw_message(&t, &rq, payload, 64, NULL),
           DS_EFAULT);
    rq = base_request((enum ds_op)200, &t, 8);
    expect("unknown operation", remote_raw_message(&t, &rq, NULL, 0, NULL), DS_EINVAL);

    /* Still serving: a proper accumulate of 1.0 into the first double works. */
    rq = base_request(DS_ACC, &t, sizeof(double));
    expect("valid acc afterwards", remote_raw_message(&t, &rq, payload, sizeof(double), NULL),
           DS_OK);
    CHECK(rejections == 12, "%d rejections answered, expected 12", rejections);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    CHECK(n == 2 && !ARMCI_Same_node(1 - me), "run with 2 processes on 2 nodes");
    void *seg[2];
    ARMCI_Malloc(seg, BLOCK);
    fill_pattern(seg[me], BLOCK, 77);
    ARMCI_Barrier();
    if (me == 0)
        attack(1, seg[1]);
    ARMCI_Barrier();
    if (me == 1) {
        /* Only the first double changed (by the valid accumulate of 1.0). */
        unsigned char expected[BLOCK];
        fill_pattern(expected, BLOCK, 77);
        double first;
        memcpy(&first, expected, sizeof(first));
        first += 1.0;
        memcpy(expected, &first, sizeof(first));
        CHECK(memcmp(expected, seg[1], BLOCK) == 0, "rejected requests changed memory");
    }
    ARMCI_Free(seg[me]);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
