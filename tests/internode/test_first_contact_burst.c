/*
 * Non-blocking operations issued at first contact, while the connection is
 * still being set up, are held to the bound that holds on a ready
 * connection: the issuing loop waits for the connection (and for its queue
 * to drain) instead of queueing without end.
 *
 * Rank 0 issues a burst of ARMCI_NbAcc (implicit handles) to rank 1, and
 * rank 1 one of ARMCI_NbPut to rank 2 (each in a process of its own, so
 * that one burst's freed memory does not hide the other's growth), each
 * the first operation towards that node, for BURST_SECONDS or BURST_OPS
 * operations, whichever comes first, then ARMCI_WaitAll. Then the same on
 * the now ready connection, for comparison. Checked: the accumulated word equals the number of
 * accumulates issued, the put word holds the last value, and the process
 * grew (peak resident memory) by less than GROWTH_LIMIT_MIB over the
 * burst; the wait is bounded generously (WAIT_LIMIT_S). The figures are
 * printed. Under ThreadSanitizer the growth is printed, not checked: its
 * allocator keeps freed blocks and their shadow for a while, about 0.25 KiB
 * per operation queued at first contact (28-32 MiB over 110,000-137,000 of
 * them, with or without the runtime's changes), against 0.3 MiB without it.
 *
 * Usage (3 processes, ARMCI_NODE_SIZE=1): test_first_contact_burst
 */
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "odcm/cm.h"
#include "testutil.h"

#define BURST_SECONDS    2.0
#define BURST_OPS        1000000L
#define GROWTH_LIMIT_MIB 32.0
#if defined(__SANITIZE_THREAD__)
#define GROWTH_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GROWTH_CHECKED 0
#endif
#endif
#ifndef GROWTH_CHECKED
#define GROWTH_CHECKED 1
#endif
#define WAIT_LIMIT_S 10.0

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"). */
static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f, "cannot open /proc/self/status");
    char line[256];
    long kib = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, n) && line[n] == ':')
            kib = atol(line + n + 1);
    fclose(f);
    CHECK(kib >= 0, "no %s in /proc/self/status", field);
    return kib;
}

struct burst {
    long ops;
    double issue_s, wait_s;
    double growth_mib; /* peak resident memory over the burst, above the resident at its start */
};

/* Issues non-blocking accumulates (or puts) of one long to `word` of `target` for a while. */
static struct burst run_burst(bool acc, long *word, int target, long first_value)
{
    static long one = 1, value;
    struct burst b = {0};
    malloc_trim(0); /* what an earlier burst freed goes back, or reuse would hide growth */
    /* Resets the peak (VmHWM) to the resident size now, where the kernel allows it. */
    FILE *clear = fopen("/proc/self/clear_refs", "w");
    if (clear) {
        fputs("5", clear);
        fclose(clear);
    }
    long rss0 = status_kib("VmRSS");
    double t0 = MPI_Wtime();
    while (b.ops < BURST_OPS && MPI_Wtime() - t0 < BURST_SECONDS) {
        if (acc) {
            ARMCI_NbAcc(ARMCI_ACC_LNG, &one, &one, word, sizeof(long), target, NULL);
        } else {
            /* The source must stay put until WaitAll: every put sends the same word. */
            value = first_value;
            ARMCI_NbPut(&value, word, sizeof(long), target, NULL);
        }
        b.ops++;
    }
    double t1 = MPI_Wtime();
    ARMCI_WaitAll();
    double t2 = MPI_Wtime();
    b.issue_s = t1 - t0;
    b.wait_s = t2 - t1;
    b.growth_mib = (double)(status_kib("VmHWM") - rss0) / 1024.0;
    return b;
}

static void report(const char *what, const struct burst *b)
{
    printf("%-28s %8ld ops in %.2f s (%.0f ops/s), WaitAll %.3f s, peak growth %.1f MiB\n", what,
           b->ops, b->issue_s, (double)b->ops / b->issue_s, b->wait_s, b->growth_mib);
    fflush(stdout);
}

static void check_bounded(const char *what, const struct burst *b)
{
    CHECK(!GROWTH_CHECKED || b->growth_mib < GROWTH_LIMIT_MIB,
          "%s: the process grew by %.1f MiB over %ld operations (limit %.0f MiB): operations "
          "issued while connecting pile up",
          what, b->growth_mib, b->ops, GROWTH_LIMIT_MIB);
    CHECK(b->wait_s < WAIT_LIMIT_S, "%s: ARMCI_WaitAll took %.1f s after %ld operations", what,
          b->wait_s, b->ops);
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    int me = armci_msg_me(), nproc = armci_msg_nproc();
    CHECK(nproc == 3, "run with 3 processes");
    for (int p = 1; p < nproc; p++)
        CHECK(!ARMCI_Same_node(p) || me != 0, "run with ARMCI_NODE_SIZE=1");
    void *words[3];
    ARMCI_Malloc(words, 2 * sizeof(long));
    memset(words[me], 0, 2 * sizeof(long));
    /* ARMCI_Barrier would connect the nodes (its flags travel over ARMCI): MPI's instead. */
    MPI_Barrier(MPI_COMM_WORLD);

    long acc_ops = 0;
    if (me < 2) {
        /* Nothing went to another node yet: this is first contact. */
        CHECK(cm_conn_count() == 0, "%d connections before the first burst", cm_conn_count());
        bool acc = me == 0;
        int target = me + 1;
        long *word = (long *)words[target] + (acc ? 0 : 1);
        struct burst first = run_burst(acc, word, target, 4242);
        report(acc ? "NbAcc at first contact" : "NbPut at first contact", &first);
        struct burst ready = run_burst(acc, word, target, 4343);
        report(acc ? "NbAcc on a ready connection" : "NbPut on a ready connection", &ready);
        check_bounded(acc ? "NbAcc at first contact" : "NbPut at first contact", &first);
        check_bounded(acc ? "NbAcc on a ready connection" : "NbPut on a ready connection", &ready);
        acc_ops = first.ops + ready.ops;
    }
    MPI_Bcast(&acc_ops, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    ARMCI_Barrier();
    if (me == 1)
        CHECK(((long *)words[1])[0] == acc_ops, "%ld accumulates arrived, %ld were issued",
              ((long *)words[1])[0], acc_ops);
    if (me == 2)
        CHECK(((long *)words[2])[1] == 4343, "the put word holds %ld, not the last value 4343",
              ((long *)words[2])[1]);
    TEST_DONE();
    ARMCI_Free(words[me]);
    ARMCI_Finalize();
    return 0;
}
