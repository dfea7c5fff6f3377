/*
 * Proves that bytes between virtual nodes travel through verbs: softib's
 * per-process counters must grow by at least what cross-node puts, gets
 * and accumulates moved (RDMA for put/get; for accumulates SENDs to the data
 * server, or its RDMA reads of the payload), and must not move at all for
 * same-node operations.
 * Run with ARMCI_NODE_SIZE=2 and 4 processes.
 */
#include <mpi.h>
#include <string.h>
#include <unistd.h>

#include "softib_counters.h"
#include "testutil.h"

static struct softib_counters now(void)
{
    struct softib_counters c;
    CHECK(softib_counters_now(&c), "softib_get_counters failed");
    return c;
}

/* This process's counters once RC sends and RDMA have stopped moving for 100 ms (at most
 * 10 s). */
static struct softib_counters settled(void)
{
    struct softib_counters last = now();
    for (int quiet_ms = 0, waited_ms = 0; quiet_ms < 100 && waited_ms < 10000; waited_ms += 10) {
        usleep(10000);
        struct softib_counters c = now();
        bool same = c.sends - c.ud_sends == last.sends - last.ud_sends &&
                    c.rdma_write_bytes == last.rdma_write_bytes &&
                    c.rdma_read_bytes == last.rdma_read_bytes;
        quiet_ms = same ? quiet_ms + 10 : 0;
        last = c;
    }
    return last;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me = armci_msg_me(), n = armci_msg_nproc();
    struct softib_counters probe;
    if (!softib_counters_now(&probe)) {
        if (me == 0)
            printf("SKIP: the runtime is not using softib (real HCA?)\n");
        ARMCI_Finalize();
        MPI_Finalize();
        return 77;
    }

    int remote = -1, local = -1;
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        if (ARMCI_Same_node(p) && local < 0)
            local = p;
        if (!ARMCI_Same_node(p) && remote < 0)
            remote = p;
    }
    CHECK(remote >= 0, "run me across at least two nodes");

    enum { BIG = 1 << 20, ACC_BYTES = 64 << 10 };
    void **seg = malloc(sizeof(void *) * n);
    ARMCI_Malloc(seg, BIG);
    char *buf = malloc(BIG);
    memset(buf, 1, BIG);
    ARMCI_Barrier();

    struct softib_counters a = now();
    ARMCI_Put(buf, seg[remote], BIG, remote);
    ARMCI_Fence(remote);
    struct softib_counters b = now();
    CHECK(b.rdma_write_bytes - a.rdma_write_bytes >= BIG,
          "a 1 MiB cross-node put moved only %llu RDMA-written bytes",
          (unsigned long long)(b.rdma_write_bytes - a.rdma_write_bytes));

    ARMCI_Get(seg[remote], buf, BIG / 4, remote);
    struct softib_counters c = now();
    CHECK(c.rdma_read_bytes - b.rdma_read_bytes >= BIG / 4, "cross-node get did not RDMA-read");

    /* Accumulates: 64 KiB is past a data server's request buffer, so the server reads it from
     * here by RDMA, counted in the server's process. Every rank sends one: summed over all
     * processes between barriers, SEND and read bytes cover them all. */
    double one = 1.0;
    c = now(); /* before the barrier: no rank's accumulate reaches a server before this */
    ARMCI_Barrier();
    ARMCI_Acc(ARMCI_ACC_DBL, &one, buf, seg[remote], ACC_BYTES, remote);
    int old;
    ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &old, seg[remote], 1, remote);
    ARMCI_Fence(remote);
    struct softib_counters d = now();
    CHECK(d.sends - c.sends >= 2, "accumulate and rmw sent %llu requests",
          (unsigned long long)(d.sends - c.sends));
    ARMCI_Barrier();
    d = settled();
    long long moved =
                  (long long)(d.send_bytes - c.send_bytes + d.rdma_read_bytes - c.rdma_read_bytes),
              all = 0;
    MPI_Allreduce(&moved, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all >= (long long)n * ACC_BYTES, "accumulate data did not go to the servers: %lld bytes",
          all);

    /* Quiet window: nobody does cross-node work, so no server replies are counted either.
     * What the cross-node work left in flight settles first: under ThreadSanitizer a data
     * server was seen to count an RC send after the barrier (its bookkeeping, slowed down). */
    ARMCI_Barrier();
    d = settled();
    if (local >= 0) {
        ARMCI_Put(buf, seg[local], BIG, local);
        ARMCI_Acc(ARMCI_ACC_DBL, &one, buf, seg[local], ACC_BYTES, local);
        ARMCI_Get(seg[local], buf, BIG, local);
        ARMCI_Fence(local);
        struct softib_counters e = now();
        /* RC traffic only: a connection-management datagram of this process (its data
         * server answering a REQ a peer retransmitted while the server was slow) may still
         * go out meanwhile, and is no same-node operation. */
        unsigned long long written = e.rdma_write_bytes - d.rdma_write_bytes,
                           read = e.rdma_read_bytes - d.rdma_read_bytes,
                           rc_sends = (e.sends - e.ud_sends) - (d.sends - d.ud_sends);
        CHECK(written == 0 && read == 0 && rc_sends == 0,
              "same-node operations went through verbs: %llu bytes RDMA-written, %llu read, "
              "%llu RC sends (and %llu UD sends)",
              written, read, rc_sends, (unsigned long long)(e.ud_sends - d.ud_sends));
    }
    armci_msg_barrier();

    /* Every request reached a data server: the servers received at least as many as were sent. */
    ARMCI_Barrier();
    struct softib_counters f = now();
    long requests = 2, received = (long)(f.recvs - a.recvs), total_requests, total_received;
    MPI_Allreduce(&requests, &total_requests, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&received, &total_received, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total_received >= total_requests, "servers received %ld requests, %ld were sent",
          total_received, total_requests);

    free(buf);
    ARMCI_Free(seg[me]);
    free(seg);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
