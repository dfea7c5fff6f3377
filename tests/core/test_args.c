/*
 * Bad input must end the job with a message naming the call and the
 * argument. Without arguments this program is the harness: it re-runs
 * itself once per case (under MPI, through run-mpi.sh) and checks that the
 * case fails with the expected text. With a case name it performs that
 * one misuse.
 * Usage: test_args RUN_MPI_SH            (harness)
 *        test_args RUN_MPI_SH CASE       (one case, under MPI)
 */
#include <armci.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct death_case {
    const char *name;
    const char *expect; /* must appear in the output */
    const char *env;    /* extra environment, or NULL */
};

static const struct death_case cases[] = {
    {"before_init", "in ARMCI_Put: ARMCI is not initialised", NULL},
    {"rank_too_big", "in ARMCI_Put: argument proc=7 is not a valid process rank", NULL},
    {"rank_negative", "in ARMCI_Get: argument proc=-1 is not a valid process rank", NULL},
    {"null_src", "in ARMCI_Put: argument src is a null pointer", NULL},
    {"negative_bytes", "in ARMCI_Put: argument bytes=-4 is negative", NULL},
    {"not_in_segment", "in ARMCI_Put: argument dst=", NULL},
    {"past_end", "run past the end of process 0's ARMCI block", NULL},
    {"acc_bad_type", "in ARMCI_Acc: argument datatype=42 is not an ARMCI_ACC_* type", NULL},
    {"acc_partial", "in ARMCI_Acc: byte count 6 is not a multiple", NULL},
    {"acc_null_scale", "in ARMCI_Acc: argument scale is a null pointer", NULL},
    {"rmw_bad_op", "in ARMCI_Rmw: argument op=9", NULL},
    {"rmw_unaligned", "in ARMCI_Rmw: argument prem=", NULL},
    {"strided_levels", "in ARMCI_PutS: argument stride_levels=9 is not in [0, 8]", NULL},
    {"strided_count", "in ARMCI_GetS: argument count[1]=-1 is negative", NULL},
    {"strided_stride", "in ARMCI_PutS: argument dst_stride_arr[0]=-8 is negative", NULL},
    {"vector_negative", "in ARMCI_PutV: argument iov[0].bytes=-1 is negative", NULL},
    {"lock_no_mutexes", "in ARMCI_Lock: no mutexes exist", NULL},
    {"lock_bad_mutex", "in ARMCI_Lock: argument mutex=3 is out of range", NULL},
    {"malloc_negative", "in ARMCI_Malloc: argument bytes=-5 is negative", NULL},
    {"free_bad_pointer", "in ARMCI_Free: argument ptr=", NULL},
    {"free_local_bad", "in ARMCI_Free_local: argument ptr=", NULL},
    {"bad_handle", "in ARMCI_Wait: argument handle was not initialised with ARMCI_INIT_HANDLE",
     NULL},
    {"gop_bad_op", "in armci_msg_gop_scope: argument op=\"xor\"", NULL},
    {"gop_bad_type", "in armci_msg_gop_scope: argument type=17", NULL},
    {"group_bad_pid", "in ARMCI_Group_create_child: argument pid_list[0]=5", NULL},
    {"domain_bad_node", "in armci_domain_nprocs: argument id=3 is not a node id", NULL},
    {"bad_env", "environment variable ARMCI_NODE_SIZE=\"two\" is invalid", "ARMCI_NODE_SIZE=two"},
    {"user_error", "in ARMCI_Error: something broke (code 3)", NULL},
};

static void run_case(const char *name)
{
    int x = 1, buf[4] = {0};
    if (!strcmp(name, "before_init")) {
        ARMCI_Put(&x, buf, 4, 0);
        return;
    }
    ARMCI_Init();
    void *p[1];
    ARMCI_Malloc(p, 64);
    int *seg = p[0];
    armci_hdl_t h = {.target = 12345, .aggregate = 0};
    int count[2] = {8, -1}, stride[1] = {8}, negative[1] = {-8};
    int count2[2] = {16, 2};
    armci_giov_t iov = {.src_ptr_array = (void **)&p,
                        .dst_ptr_array = (void **)&p,
                        .bytes = -1,
                        .ptr_array_len = 1};
    int pid = 5;

    if (!strcmp(name, "rank_too_big"))
        ARMCI_Put(&x, seg, 4, 7);
    else if (!strcmp(name, "rank_negative"))
        ARMCI_Get(seg, &x, 4, -1);
    else if (!strcmp(name, "null_src"))
        ARMCI_Put(NULL, seg, 4, 0);
    else if (!strcmp(name, "negative_bytes"))
        ARMCI_Put(&x, seg, -4, 0);
    else if (!strcmp(name, "not_in_segment"))
        ARMCI_Put(&x, buf, 4, 0);
    else if (!strcmp(name, "past_end"))
        ARMCI_Put(buf, seg + 14, 16, 0);
    else if (!strcmp(name, "acc_bad_type"))
        ARMCI_Acc(42, &x, &x, seg, 4, 0);
    else if (!strcmp(name, "acc_partial"))
        ARMCI_Acc(ARMCI_ACC_INT, &x, buf, seg, 6, 0);
    else if (!strcmp(name, "acc_null_scale"))
        ARMCI_Acc(ARMCI_ACC_INT, NULL, buf, seg, 4, 0);
    else if (!strcmp(name, "rmw_bad_op"))
        ARMCI_Rmw(9, &x, seg, 1, 0);
    else if (!strcmp(name, "rmw_unaligned"))
        ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &x, (char *)seg + 1, 1, 0);
    else if (!strcmp(name, "strided_levels"))
        ARMCI_PutS(buf, stride, seg, stride, count, 9, 0);
    else if (!strcmp(name, "strided_count"))
        ARMCI_GetS(seg, stride, buf, stride, count, 1, 0);
    else if (!strcmp(name, "strided_stride"))
        ARMCI_PutS(buf, (int[]){16}, seg, negative, count2, 1, 0);
    else if (!strcmp(name, "vector_negative"))
        ARMCI_PutV(&iov, 1, 0);
    else if (!strcmp(name, "lock_no_mutexes"))
        ARMCI_Lock(0, 0);
    else if (!strcmp(name, "lock_bad_mutex")) {
        ARMCI_Create_mutexes(2);
        ARMCI_Lock(3, 0);
    } else if (!strcmp(name, "malloc_negative"))
        ARMCI_Malloc(p, -5);
    else if (!strcmp(name, "free_bad_pointer"))
        ARMCI_Free(buf);
    else if (!strcmp(name, "free_local_bad"))
        ARMCI_Free_local(buf);
    else if (!strcmp(name, "bad_handle"))
        ARMCI_Wait(&h);
    else if (!strcmp(name, "gop_bad_op"))
        armci_msg_gop_scope(SCOPE_ALL, buf, 1, "xor", ARMCI_INT);
    else if (!strcmp(name, "gop_bad_type"))
        armci_msg_gop_scope(SCOPE_ALL, buf, 1, "+", 17);
    else if (!strcmp(name, "group_bad_pid")) {
        ARMCI_Group g;
        ARMCI_Group_create(1, &pid, &g);
    } else if (!strcmp(name, "domain_bad_node"))
        armci_domain_nprocs(ARMCI_DOMAIN_SMP, 3);
    else if (!strcmp(name, "bad_env"))
        ; /* ARMCI_Init already failed */
    else if (!strcmp(name, "user_error"))
        ARMCI_Error("something broke", 3);
    ARMCI_Finalize();
}

static int run_harness(const char *run_mpi, const char *self)
{
    int failed = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char cmd[4096];
        snprintf(cmd, sizeof(cmd), "%s %s 1 %s %s %s 2>&1", cases[i].env ? cases[i].env : "",
                 run_mpi, self, run_mpi, cases[i].name);
        FILE *f = popen(cmd, "r");
        if (!f) {
            perror("popen");
            return 1;
        }
        char out[16384];
        size_t n = fread(out, 1, sizeof(out) - 1, f);
        out[n] = 0;
        int status = pclose(f);
        bool died = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        bool said = strstr(out, cases[i].expect) != NULL;
        printf("%-18s %s\n", cases[i].name, died && said ? "ok" : "FAILED");
        if (!(died && said)) {
            failed++;
            printf("  expected a failure mentioning: %s\n  got (exit %d):\n%s\n", cases[i].expect,
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
        }
    }
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return run_harness(argv[1], argv[0]);
    if (argc == 3) {
        run_case(argv[2]);
        return 0; /* reaching here means the misuse was not caught */
    }
    fprintf(stderr, "usage: %s RUN_MPI_SH [CASE]\n", argv[0]);
    return 2;
}
