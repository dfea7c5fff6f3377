/*
 * On-demand connections follow the communication pattern exactly. Each
 * process talks only to the targets its pattern names (byte-exact puts and
 * accumulates, checked by the owners), then every process's client->server
 * connection count and every data server's server->client count must equal
 * what that pattern requires: no more (nothing connected eagerly), no less.
 * On softib, the QPs that exist in the whole fabric are counted too: one per
 * connection end, plus the UD QPs and the QPs pools keep made ahead, never
 * more (a pool that kept making QPs for callers that had one already would
 * fill the device at scale).
 * fanout is alltoall with every put issued before any is waited for: a process sets up all
 * its connections at once.
 * Usage: test_patterns ring|neighbours|alltoall|fanout|local|storm [--expect-retransmissions]
 * Barriers here are MPI's own, so that the runtime's RDMA barrier (which
 * connects node masters) does not add connections to the count.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <softib/softib.h>
#include <stdlib.h>
#include <string.h>

#include "odcm/cm_server.h"
#include "odcm/cm.h"
#include "testutil.h"
#include "core/topology.h"

static int me, n;

/* QPs in the softib fabric now, or -1 when the runtime does not use softib. */
static long fabric_qps(void)
{
    void *softib = dlopen("libsoftib.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!softib)
        return -1;
    int (*stats)(struct softib_fabric_stats *) =
        (int (*)(struct softib_fabric_stats *))dlsym(softib, "softib_fabric_stats");
    struct softib_fabric_stats st = {.size = sizeof(st)};
    CHECK(stats && stats(&st) == 0, "softib_fabric_stats failed");
    dlclose(softib);
    return st.qps;
}

/* targets[r * n + t] != 0: rank r talks to rank t. */
static void make_pattern(const char *name, char *targets)
{
    memset(targets, 0, (size_t)n * n);
    int nodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    for (int r = 0; r < n; r++) {
        int node = armci_domain_id(ARMCI_DOMAIN_SMP, r);
        int local = r - armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, node, 0);
        if (!strcmp(name, "alltoall") || !strcmp(name, "fanout")) {
            for (int t = 0; t < n; t++)
                targets[r * n + t] = t != r;
        } else if (!strcmp(name, "local")) {
            for (int t = 0; t < n; t++)
                targets[r * n + t] = t != r && armci_domain_id(ARMCI_DOMAIN_SMP, t) == node;
        } else if (!strcmp(name, "storm")) {
            targets[r * n + 0] = r != 0;
        } else {
            /* ring: the next node; neighbours: the next and the previous node. */
            int steps[2] = {1, nodes - 1};
            int nsteps = !strcmp(name, "ring") ? 1 : 2;
            for (int s = 0; s < nsteps && nodes > 1; s++) {
                int tn = (node + steps[s]) % nodes;
                int size = armci_domain_nprocs(ARMCI_DOMAIN_SMP, tn);
                int t = armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, tn, local < size ? local : 0);
                targets[r * n + t] = 1;
            }
        }
    }
}

static void expected_counts(const char *targets, long *c2s, long *s2c)
{
    int nodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    for (int r = 0; r < n; r++) {
        int rnode = armci_domain_id(ARMCI_DOMAIN_SMP, r);
        c2s[r] = 0;
        for (int node = 0; node < nodes; node++) {
            if (node == rnode)
                continue;
            for (int t = 0; t < n; t++)
                if (targets[r * n + t] && armci_domain_id(ARMCI_DOMAIN_SMP, t) == node) {
                    c2s[r]++;
                    break;
                }
        }
    }
    for (int node = 0; node < nodes; node++) {
        s2c[node] = 0;
        for (int r = 0; r < n; r++) {
            if (armci_domain_id(ARMCI_DOMAIN_SMP, r) == node)
                continue;
            for (int t = 0; t < n; t++)
                if (targets[r * n + t] && armci_domain_id(ARMCI_DOMAIN_SMP, t) == node) {
                    s2c[node]++;
                    break;
                }
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    n = armci_msg_nproc();
    const char *pattern = argc > 1 ? argv[1] : "ring";
    int expect_retrans = argc > 2 && !strcmp(argv[2], "--expect-retransmissions");

    char *targets = malloc((size_t)n * n);
    make_pattern(pattern, targets);
    enum { SLOT = 4096 };
    void **seg = malloc(sizeof(void *) * n);
    ARMCI_Malloc(seg, (armci_size_t)SLOT * n);
    memset(seg[me], 0, (size_t)SLOT * n);
    unsigned char *buf = malloc(SLOT);
    unsigned char *bufs = malloc((size_t)SLOT * n); /* fanout: a put's source each */
    MPI_Barrier(MPI_COMM_WORLD);

    /* Everyone starts at once: a storm of connection requests. */
    bool fanout = !strcmp(pattern, "fanout");
    for (int round = 0; round < 3; round++) {
        if (fanout) {
            for (int t = 0; t < n; t++) {
                if (!targets[me * n + t])
                    continue;
                fill_pattern(bufs + (size_t)t * SLOT, SLOT,
                             (uint64_t)me * 131 + (uint64_t)t * 7 + (uint64_t)round);
                ARMCI_NbPut(bufs + (size_t)t * SLOT, (char *)seg[t] + (size_t)me * SLOT, SLOT, t,
                            NULL);
            }
            ARMCI_WaitAll();
        }
        for (int t = 0; t < n; t++) {
            if (!targets[me * n + t])
                continue;
            if (!fanout) {
                fill_pattern(buf, SLOT, (uint64_t)me * 131 + (uint64_t)t * 7 + (uint64_t)round);
                armci_hdl_t h;
                ARMCI_INIT_HANDLE(&h);
                ARMCI_NbPut(buf, (char *)seg[t] + (size_t)me * SLOT, SLOT, t, &h);
                ARMCI_Wait(&h);
            }
            long one = 1;
            ARMCI_Acc(ARMCI_ACC_LNG, &one, &one, (char *)seg[t] + (size_t)me * SLOT, sizeof(long),
                      t);
        }
        ARMCI_AllFence();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int w = 0; w < n; w++) {
        if (!targets[w * n + me])
            continue;
        unsigned char want[SLOT];
        fill_pattern(want, SLOT, (uint64_t)w * 131 + (uint64_t)me * 7 + 2);
        long first;
        memcpy(&first, want, sizeof(first));
        first += 1; /* the last round's accumulate, after its put */
        memcpy(want, &first, sizeof(first));
        CHECK(memcmp(want, (char *)seg[me] + (size_t)w * SLOT, SLOT) == 0,
              "data from rank %d is wrong", w);
    }

    long *c2s = malloc(sizeof(long) * n), *s2c = malloc(sizeof(long) * n);
    expected_counts(targets, c2s, s2c);
    long mine = cm_conn_count();
    CHECK(mine == c2s[me], "pattern %s: %ld client->server connections, expected %ld", pattern,
          mine, c2s[me]);
    if (me ==
        armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, armci_domain_my_id(ARMCI_DOMAIN_SMP), 0)) {
        long served = cm_server_conn_count();
        long want = s2c[armci_domain_my_id(ARMCI_DOMAIN_SMP)];
        CHECK(served == want, "pattern %s: data server holds %ld connections, expected %ld",
              pattern, served, want);
    }
    /* Every process's connections are up and nobody connects any more (MPI barrier). */
    long conns_total;
    MPI_Allreduce(&mine, &conns_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    long qps = fabric_qps();
    if (me == 0 && qps >= 0) {
        const char *keep_env = getenv("ARMCI_QP_POOL");
        long keep = keep_env ? atol(keep_env) : 4;
        /* both ends of each connection; a client and a server UD QP and pool per process */
        long bound = 2 * conns_total + 2L * n + 2L * n * keep;
        CHECK(qps <= bound, "pattern %s: %ld QPs in the fabric for %ld connections (at most %ld)",
              pattern, qps, conns_total, bound);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    long retrans = cm_retransmissions(), total;
    MPI_Allreduce(&retrans, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (expect_retrans)
        CHECK(total > 0, "UD loss was injected but nothing was retransmitted");
    if (me == 0)
        printf("pattern %s: counts as expected, %ld retransmissions\n", pattern, total);

    MPI_Barrier(MPI_COMM_WORLD);
    ARMCI_Free(seg[me]);
    free(seg);
    free(buf);
    free(bufs);
    free(targets);
    free(c2s);
    free(s2c);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
