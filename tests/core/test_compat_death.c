/*
 * Input that would corrupt memory or hang must end the job with a message
 * naming the call and the argument: NULL local buffers (and NULL plus an
 * offset, what GA makes of a NULL buffer for all but the first block),
 * operators not defined on a type, group handles used by non-members.
 * Usage: test_compat_death CASE; tests/core/meson.build runs every case
 * under tests/expect-failure.sh with the message it must print. Rank 0
 * misbehaves; the others wait in a barrier (the abort ends them).
 */
#include <armci.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char buf[64];
static void **seg;
static int me, nproc;

/* Where a remote operation goes: the next process (on another node with ARMCI_NODE_SIZE=1). */
static int peer(void)
{
    return (me + 1) % nproc;
}

static char *remote_at(int proc)
{
    return (char *)seg[proc];
}

/* The bytes of text (no NUL) ending where an inaccessible page begins. */
static char *at_page_end(const char *text)
{
    long page = sysconf(_SC_PAGESIZE);
    char *p =
        mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(p + page, (size_t)page, PROT_NONE);
    size_t len = strlen(text);
    memcpy(p + page - len, text, len);
    return p + page - len;
}

/* One misuse per case; returns false for an unknown case name. */
static int misbehave(const char *name)
{
    int t = peer(), one = 1, stride[1] = {8}, count[2] = {8, 2};
    void *two[2] = {buf, NULL}, *null_first[1] = {NULL}, *rem[2] = {seg[t], remote_at(t) + 8};
    armci_giov_t v_get = {rem, two, 8, 2}, v_put = {null_first, rem, 8, 1},
                 v_null = {rem, NULL, 8, 1};
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    ARMCI_Group g;
    int zero = 0;
    double x[2] = {1, 2};
    float f = 1;

    if (!strcmp(name, "get-null-dst"))
        ARMCI_Get(seg[t], NULL, 8, t);
    else if (!strcmp(name, "get-null-plus-offset"))
        ARMCI_Get(seg[t], (char *)NULL + 64, 8, t);
    else if (!strcmp(name, "nbget-null-dst"))
        ARMCI_NbGet(seg[t], NULL, 8, t, &h);
    else if (!strcmp(name, "put-null-src"))
        ARMCI_Put(NULL, seg[t], 8, t);
    else if (!strcmp(name, "acc-null-src"))
        ARMCI_Acc(ARMCI_ACC_DBL, x, NULL, seg[t], 8, t);
    else if (!strcmp(name, "gets-null-dst"))
        ARMCI_GetS(seg[t], stride, NULL, stride, count, 1, t);
    else if (!strcmp(name, "nbgets-null-plus-offset"))
        ARMCI_NbGetS(seg[t], stride, (char *)NULL + 400, stride, count, 1, t, &h);
    else if (!strcmp(name, "puts-null-src"))
        ARMCI_PutS(NULL, stride, seg[t], stride, count, 1, t);
    else if (!strcmp(name, "nbaccs-null-src"))
        ARMCI_NbAccS(ARMCI_ACC_DBL, x, NULL, stride, seg[t], stride, count, 1, t, NULL);
    else if (!strcmp(name, "getv-null-element"))
        ARMCI_GetV(&v_get, 1, t);
    else if (!strcmp(name, "putv-null-element"))
        ARMCI_PutV(&v_put, 1, t);
    else if (!strcmp(name, "accv-null-element"))
        ARMCI_AccV(ARMCI_ACC_DBL, x, &v_put, 1, t);
    else if (!strcmp(name, "nbgetv-null-array"))
        ARMCI_NbGetV(&v_null, 1, t, &h);
    else if (!strcmp(name, "rmw-null-ploc"))
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD, NULL, seg[t], 1, t);
    else if (!strcmp(name, "put-flag-null-flag"))
        ARMCI_Put_flag(buf, seg[t], 8, NULL, 1, t);
    else if (!strcmp(name, "copy-null-dst"))
        ARMCI_Copy(buf, NULL, 8);
    else if (!strcmp(name, "read-strided-null-buf"))
        armci_read_strided(buf, 1, stride, count, NULL);
    else if (!strcmp(name, "write-strided-null-ptr"))
        armci_write_strided(NULL, 1, stride, count, buf);
    else if (!strcmp(name, "bcast-null"))
        armci_msg_bcast(NULL, 8, 0);
    else if (!strcmp(name, "gop-null-x"))
        armci_msg_dgop(NULL, 2, "+");
    else if (!strcmp(name, "snd-null"))
        armci_msg_snd(1, NULL, 8, t);
    else if (!strcmp(name, "float-logical-op"))
        armci_msg_fgop(&f, 1, "&&");
    else if (!strcmp(name, "double-bitwise-op"))
        armci_msg_gop_scope(SCOPE_ALL, x, 2, at_page_end("|="), ARMCI_DOUBLE);
    else if (!strcmp(name, "unknown-op-at-page-end"))
        armci_msg_igop(&one, 1, at_page_end("xy"));
    else if (!strcmp(name, "sel-bad-op"))
        armci_msg_sel(x, sizeof(x), "avg", ARMCI_DOUBLE, 1);
    else if (!strcmp(name, "bad-scope"))
        armci_msg_gop_scope(5, x, 2, "+", ARMCI_DOUBLE);
    else if (!strcmp(name, "bcast-bad-root"))
        armci_msg_bcast(buf, 8, 9);
    else if (!strcmp(name, "free-world-group")) {
        ARMCI_Group_get_world(&g);
        ARMCI_Group_free(&g);
    } else if (!strcmp(name, "nonmember-barrier")) {
        ARMCI_Group_create(1, &zero, &g);
        if (me == 1)
            armci_msg_group_barrier(&g);
    } else if (!strcmp(name, "nonmember-malloc-group")) {
        ARMCI_Group_create(1, &zero, &g);
        if (me == 1)
            ARMCI_Malloc_group((void **)buf, 8, &g);
    } else if (!strcmp(name, "nonmember-default-create")) {
        ARMCI_Group_create(1, &zero, &g);
        ARMCI_Group_set_default(&g);
        if (me == 1)
            ARMCI_Group_create(1, &zero, &g);
    } else if (!strcmp(name, "nonmember-absolute-id")) {
        ARMCI_Group_create(1, &zero, &g);
        if (me == 1)
            ARMCI_Absolute_id(&g, 1);
    } else
        return 0;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 2;
    }
    ARMCI_Init_args(&argc, &argv);
    me = armci_msg_me();
    nproc = armci_msg_nproc();
    seg = malloc(sizeof(void *) * (size_t)nproc);
    ARMCI_Malloc(seg, 256);
    /* Group cases are collective; the others misbehave on rank 0 only. */
    int collective = !strncmp(argv[1], "nonmember-", 10) || !strncmp(argv[1], "free-", 5);
    if ((me == 0 || collective) && !misbehave(argv[1])) {
        fprintf(stderr, "unknown case %s\n", argv[1]);
        ARMCI_Error("unknown case", 2);
    }
    /* Reaching here on every rank means the misuse was not caught: exit 0, the test fails. */
    MPI_Barrier(MPI_COMM_WORLD);
    ARMCI_Finalize();
    return 0;
}
