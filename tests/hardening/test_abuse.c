/*
 * Misuse by a rank of the job, or by a process beside it: each mode replays
 * one attack and checks that the job goes on with its data intact, or ends
 * with an error naming what was wrong (the meson test then matches the
 * text). Run with 4 processes in 2 virtual nodes of 2 (ARMCI_NODE_SIZE=2)
 * unless the mode says otherwise.
 *
 *   link-attack ATTACKER   another process (and another user) talks to the
 *                          node's local socket: refused; the job goes on
 *   link-peers             every process of a big node uses the local socket
 *   lock-on-data           lock requests on ordinary data are refused
 *   unlock-remote          unlock of a mutex held by nobody, through the server
 *   unlock-local           the same on this node
 *   bad-reply-rkey         a packed get naming a reply buffer the server cannot
 *                          write: its sender gets an error, the server goes on
 *   free-mismatch          ranks free different segments
 *   free-null              a rank passes NULL for a block it has
 *   shm-peer-dies          (with ARMCI_TEST_HOOKS=8) a process dies while a new
 *                          shared-memory object still has its name
 *   index-writer-dies      (with ARMCI_TEST_HOOKS=2048) the process writing a block
 *                          index for its node is killed halfway through (an array
 *                          of irregular sizes: a regular one has no index)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/segment.h"
#include "core/runtime.h"
#include "transport/raw.h"
#include "testutil.h"

enum { BLOCK = 8192 };

static int me, nprocs;

/* The partner of every rank in the other virtual node. */
static int partner(void)
{
    return (me + 2) % nprocs;
}

/* Puts a pattern to the partner, gets it back and compares, byte for byte. */
static void check_data_path(void **seg, uint64_t seed)
{
    unsigned char out[BLOCK], in[BLOCK];
    fill_pattern(out, BLOCK, seed + (uint64_t)me);
    ARMCI_Put(out, seg[partner()], BLOCK, partner());
    ARMCI_Fence(partner());
    ARMCI_Get(seg[partner()], in, BLOCK, partner());
    CHECK(memcmp(in, out, BLOCK) == 0, "data through node %d's server changed", partner());
    ARMCI_Barrier();
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static void link_attack(void **seg, const char *attacker)
{
    if (me == 0) {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s armci-%s-", attacker, rt.job_id);
        CHECK(run(cmd) == 0, "the attacker (same user, not in the job) was answered");
        if (geteuid() == 0 && run("command -v setpriv >/dev/null") == 0) {
            snprintf(cmd, sizeof(cmd),
                     "setpriv --reuid=nobody --regid=nogroup --clear-groups %s armci-%s-", attacker,
                     rt.job_id);
            CHECK(run(cmd) == 0, "the attacker (user nobody) was answered");
        } else {
            printf("SKIP the other-user attack: needs root and setpriv\n");
        }
    }
    ARMCI_Barrier();
    /* The server still maps new segments, serves data and stops at finalize. */
    check_data_path(seg, 11);
    void *more[64];
    ARMCI_Malloc(more, BLOCK);
    check_data_path(more, 12);
    ARMCI_Free(more[me]);
}

static void lock_on_data(void **seg)
{
    ARMCI_Create_mutexes(1);
    fill_pattern(seg[me], BLOCK, 21);
    ARMCI_Barrier();
    if (me == 0) {
        struct target t;
        seg_resolve("test", "block", partner(), seg[partner()], 64, &t);
        struct ds_message rq = {.op = DS_LOCK, .origin = me, .addr = t.server_addr, .len = 64};
        CHECK(remote_raw_message(&t, &rq, NULL, 0, NULL) == DS_EFAULT,
              "a lock on ordinary data was not refused");
        rq.op = DS_UNLOCK;
        CHECK(remote_raw_message(&t, &rq, NULL, 0, NULL) == DS_EFAULT,
              "an unlock on ordinary data was not refused");
    }
    ARMCI_Barrier();
    CHECK(check_pattern(seg[me], BLOCK, 21) < 0, "refused lock requests changed data");
    /* Real mutexes still work across nodes: a counter under a lock. */
    long *counter = seg[0];
    if (me == 0)
        *counter = 0;
    ARMCI_Barrier();
    for (int i = 0; i < 20; i++) {
        ARMCI_Lock(0, 0);
        long v;
        ARMCI_Get(counter, &v, sizeof(v), 0);
        v++;
        ARMCI_Put(&v, counter, sizeof(v), 0);
        ARMCI_Fence(0);
        ARMCI_Unlock(0, 0);
    }
    ARMCI_Barrier();
    if (me == 0)
        CHECK(*counter == 20L * nprocs, "counter %ld, expected %ld", *counter, 20L * nprocs);
    ARMCI_Barrier();
    ARMCI_Destroy_mutexes();
}

static void unlock_not_held(int host)
{
    ARMCI_Create_mutexes(1);
    ARMCI_Barrier();
    if (me == 0) {
        ARMCI_Unlock(0, host); /* never locked: must end the job with a named error */
        ARMCI_Fence(host);
    }
    ARMCI_Barrier();
    ARMCI_Destroy_mutexes();
}

static void bad_reply_rkey(void **seg)
{
    ARMCI_Barrier();
    if (me == 0) {
        struct target t;
        seg_resolve("test", "block", partner(), seg[partner()], 256, &t);
        static char landing[256];
        struct ds_message rq = {.op = DS_GET_PACKED,
                                .origin = me,
                                .addr = t.server_addr,
                                .len = 256,
                                .reply_addr = (uintptr_t)landing,
                                .reply_rkey = 0x5eed,
                                .stride = {.levels = 0, .count = {256}}};
        remote_raw_message(&t, &rq, NULL, 0, NULL);
        CHECK(0, "a reply the server could not deliver was answered");
    }
    ARMCI_Barrier();
}

static void free_mismatch(bool pass_null)
{
    void *a[64], *b[64];
    ARMCI_Malloc(a, 128);
    ARMCI_Malloc(b, 128);
    if (pass_null)
        ARMCI_Free(me == 1 ? NULL : a[me]);
    else
        ARMCI_Free(me == 1 ? b[me] : a[me]);
    CHECK(0, "ARMCI_Free of mismatched segments was accepted");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    me = armci_msg_me();
    nprocs = armci_msg_nproc();
    const char *mode = argc > 1 ? argv[1] : "";
    CHECK(nprocs <= 64 || !strcmp(mode, "link-peers"), "too many processes for this test");
    void *seg[64];
    if (strcmp(mode, "link-peers") != 0) {
        CHECK(nprocs == 4 && !ARMCI_Same_node(partner()), "run with 4 processes in 2 nodes");
        /* A regular array (every process BLOCK) has no index to write: sizes differ there. */
        bool irregular = !strcmp(mode, "index-writer-dies");
        ARMCI_Malloc(seg, BLOCK + (irregular ? 64 * (me % 2) : 0));
    }

    if (!strcmp(mode, "link-attack") && argc > 2)
        link_attack(seg, argv[2]);
    else if (!strcmp(mode, "link-peers"))
        ARMCI_Barrier(); /* every process pinged its server at init (ARMCI_TEST_HOOKS=16) */
    else if (!strcmp(mode, "lock-on-data"))
        lock_on_data(seg);
    else if (!strcmp(mode, "unlock-remote"))
        unlock_not_held(partner());
    else if (!strcmp(mode, "unlock-local"))
        unlock_not_held(1);
    else if (!strcmp(mode, "bad-reply-rkey"))
        bad_reply_rkey(seg);
    else if (!strcmp(mode, "free-mismatch") || !strcmp(mode, "free-null"))
        free_mismatch(!strcmp(mode, "free-null"));
    else if (strcmp(mode, "shm-peer-dies") != 0 && strcmp(mode, "index-writer-dies") != 0)
        CHECK(0, "unknown mode '%s'", mode);

    if (strcmp(mode, "link-peers") != 0)
        ARMCI_Free(seg[me]);
    TEST_DONE();
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
