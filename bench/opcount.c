/*
 * A profiling library over ARMCI's PARMCI interface: preloaded into an
 * unchanged program (LD_PRELOAD=libarmci_opcount.so), it counts every
 * one-sided call, split by whether the target is on the caller's node, with
 * the bytes, the contiguous pieces and the time spent inside the call. It
 * answers "how many remote operations does this program make, and how long
 * does it wait in them", the bound of a latency-bound program.
 *
 * At ARMCI_Finalize every process writes CSV rows to
 * $OPCOUNT_DIR/opcount.<rank>.csv (default: the current directory):
 *   rank,call,where,calls,bytes,pieces,seconds
 * where is "remote", "node" (same node) or "-" (collectives and waits); one
 * row "run,-" holds the seconds from ARMCI_Init's return to ARMCI_Finalize
 * (0 if the program started ARMCI another way).
 * bench/ga/opcount.py sums the files. The tallies take no lock: in a program
 * whose threads call ARMCI at the same time, a few counts may be lost.
 */
#include <armci.h>
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The implementations behind the weak ARMCI_ names (the PARMCI interface). */
int PARMCI_Init(void);
int PARMCI_Init_args(int *argc, char ***argv);
int PARMCI_Finalize(void);
int PARMCI_Put(void *src, void *dst, int bytes, int proc);
int PARMCI_Get(void *src, void *dst, int bytes, int proc);
int PARMCI_Acc(int type, void *scale, void *src, void *dst, int bytes, int proc);
int PARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int PARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int PARMCI_NbAcc(int type, void *scale, void *src, void *dst, int bytes, int proc,
                 armci_hdl_t *hdl);
int PARMCI_PutS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
                int proc);
int PARMCI_GetS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
                int proc);
int PARMCI_AccS(int type, void *scale, void *src, int src_stride[], void *dst, int dst_stride[],
                int count[], int levels, int proc);
int PARMCI_PutS_flag(void *src, int src_stride[], void *dst, int dst_stride[], int count[],
                     int levels, int *flag, int value, int proc);
int PARMCI_NbPutS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
                  int proc, armci_hdl_t *hdl);
int PARMCI_NbGetS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
                  int proc, armci_hdl_t *hdl);
int PARMCI_NbAccS(int type, void *scale, void *src, int src_stride[], void *dst, int dst_stride[],
                  int count[], int levels, int proc, armci_hdl_t *hdl);
int PARMCI_PutV(armci_giov_t *iov, int len, int proc);
int PARMCI_GetV(armci_giov_t *iov, int len, int proc);
int PARMCI_AccV(int type, void *scale, armci_giov_t *iov, int len, int proc);
int PARMCI_NbPutV(armci_giov_t *iov, int len, int proc, armci_hdl_t *hdl);
int PARMCI_NbGetV(armci_giov_t *iov, int len, int proc, armci_hdl_t *hdl);
int PARMCI_NbAccV(int type, void *scale, armci_giov_t *iov, int len, int proc, armci_hdl_t *hdl);
int PARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc);
void PARMCI_Lock(int mutex, int proc);
void PARMCI_Unlock(int mutex, int proc);
int PARMCI_Wait(armci_hdl_t *hdl);
int PARMCI_WaitAll(void);
int PARMCI_WaitProc(int proc);
int PARMCI_Test(armci_hdl_t *hdl);
void PARMCI_Fence(int proc);
void PARMCI_AllFence(void);
void PARMCI_Barrier(void);
void parmci_msg_barrier(void);

enum call {
    C_PUT,
    C_GET,
    C_ACC,
    C_NBPUT,
    C_NBGET,
    C_NBACC,
    C_PUTS,
    C_GETS,
    C_ACCS,
    C_PUTS_FLAG,
    C_NBPUTS,
    C_NBGETS,
    C_NBACCS,
    C_PUTV,
    C_GETV,
    C_ACCV,
    C_NBPUTV,
    C_NBGETV,
    C_NBACCV,
    C_RMW,
    C_LOCK,
    C_UNLOCK,
    C_WAIT,
    C_WAITALL,
    C_WAITPROC,
    C_TEST,
    C_FENCE,
    C_ALLFENCE,
    C_BARRIER,
    C_MSG_BARRIER,
    C_COUNT
};
static const char *call_name[C_COUNT] = {
    [C_PUT] = "Put",           [C_GET] = "Get",
    [C_ACC] = "Acc",           [C_NBPUT] = "NbPut",
    [C_NBGET] = "NbGet",       [C_NBACC] = "NbAcc",
    [C_PUTS] = "PutS",         [C_GETS] = "GetS",
    [C_ACCS] = "AccS",         [C_PUTS_FLAG] = "PutS_flag",
    [C_NBPUTS] = "NbPutS",     [C_NBGETS] = "NbGetS",
    [C_NBACCS] = "NbAccS",     [C_PUTV] = "PutV",
    [C_GETV] = "GetV",         [C_ACCV] = "AccV",
    [C_NBPUTV] = "NbPutV",     [C_NBGETV] = "NbGetV",
    [C_NBACCV] = "NbAccV",     [C_RMW] = "Rmw",
    [C_LOCK] = "Lock",         [C_UNLOCK] = "Unlock",
    [C_WAIT] = "Wait",         [C_WAITALL] = "WaitAll",
    [C_WAITPROC] = "WaitProc", [C_TEST] = "Test",
    [C_FENCE] = "Fence",       [C_ALLFENCE] = "AllFence",
    [C_BARRIER] = "Barrier",   [C_MSG_BARRIER] = "msg_barrier",
};

enum where { W_REMOTE, W_NODE, W_NONE, W_COUNT };
static const char *where_name[W_COUNT] = {"remote", "node", "-"};

struct tally {
    long calls, pieces;
    double bytes, seconds;
};
static struct tally tallies[C_COUNT][W_COUNT];
static double run_start;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static enum where where_of(int proc)
{
    return armci_domain_same_id(ARMCI_DOMAIN_SMP, proc) ? W_NODE : W_REMOTE;
}

static void add(enum call c, enum where w, double bytes, long pieces, double t0)
{
    struct tally *t = &tallies[c][w];
    t->calls++;
    t->bytes += bytes;
    t->pieces += pieces;
    t->seconds += now() - t0;
}

/* A strided descriptor's rows (contiguous pieces) and bytes. */
static long strided_rows(const int count[], int levels)
{
    long rows = 1;
    for (int i = 1; i <= levels; i++)
        rows *= count[i];
    return rows;
}

static double strided_bytes(const int count[], int levels)
{
    return (double)count[0] * strided_rows(count, levels);
}

static long vector_pieces(const armci_giov_t *iov, int len)
{
    long n = 0;
    for (int i = 0; i < len; i++)
        n += iov[i].ptr_array_len;
    return n;
}

static double vector_bytes(const armci_giov_t *iov, int len)
{
    double b = 0;
    for (int i = 0; i < len; i++)
        b += (double)iov[i].bytes * iov[i].ptr_array_len;
    return b;
}

/* Times `call` (returning int) and adds it to call c's tally for proc; the caller returns. */
#define TIMED(c, proc, bytes, pieces, call)         \
    do {                                            \
        double t0_ = now();                         \
        int rc_ = (call);                           \
        add(c, where_of(proc), bytes, pieces, t0_); \
        return rc_;                                 \
    } while (0)
#define CONTIGUOUS(c, bytes, proc, call) TIMED(c, proc, bytes, 1, call)
#define STRIDED(c, count, levels, proc, call) \
    TIMED(c, proc, strided_bytes(count, levels), strided_rows(count, levels), call)
#define VECTOR(c, iov, len, proc, call) \
    TIMED(c, proc, vector_bytes(iov, len), vector_pieces(iov, len), call)
#define WAITING(c, call)           \
    do {                           \
        double t0_ = now();        \
        call;                      \
        add(c, W_NONE, 0, 0, t0_); \
    } while (0)

/* ARMCI is up: the run's seconds count from here. */
static int started(int rc)
{
    run_start = now();
    return rc;
}

int ARMCI_Init(void)
{
    return started(PARMCI_Init());
}

int ARMCI_Init_args(int *argc, char ***argv)
{
    return started(PARMCI_Init_args(argc, argv));
}

static void write_tallies(void)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = getenv("OPCOUNT_DIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/opcount.%d.csv", dir && *dir ? dir : ".", rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "libarmci_opcount: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "rank,call,where,calls,bytes,pieces,seconds\n");
    fprintf(f, "%d,run,-,1,0,0,%.6f\n", rank, run_start > 0 ? now() - run_start : 0);
    for (int c = 0; c < C_COUNT; c++)
        for (int w = 0; w < W_COUNT; w++) {
            const struct tally *t = &tallies[c][w];
            if (t->calls)
                fprintf(f, "%d,%s,%s,%ld,%.0f,%ld,%.6f\n", rank, call_name[c], where_name[w],
                        t->calls, t->bytes, t->pieces, t->seconds);
        }
    fclose(f);
}

int ARMCI_Finalize(void)
{
    write_tallies();
    return PARMCI_Finalize();
}

int ARMCI_Put(void *src, void *dst, int bytes, int proc)
{
    CONTIGUOUS(C_PUT, bytes, proc, PARMCI_Put(src, dst, bytes, proc));
}

int ARMCI_Get(void *src, void *dst, int bytes, int proc)
{
    CONTIGUOUS(C_GET, bytes, proc, PARMCI_Get(src, dst, bytes, proc));
}

int ARMCI_Acc(int type, void *scale, void *src, void *dst, int bytes, int proc)
{
    CONTIGUOUS(C_ACC, bytes, proc, PARMCI_Acc(type, scale, src, dst, bytes, proc));
}

int ARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    CONTIGUOUS(C_NBPUT, bytes, proc, PARMCI_NbPut(src, dst, bytes, proc, hdl));
}

int ARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    CONTIGUOUS(C_NBGET, bytes, proc, PARMCI_NbGet(src, dst, bytes, proc, hdl));
}

int ARMCI_NbAcc(int type, void *scale, void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    CONTIGUOUS(C_NBACC, bytes, proc, PARMCI_NbAcc(type, scale, src, dst, bytes, proc, hdl));
}

int ARMCI_PutS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
               int proc)
{
    STRIDED(C_PUTS, count, levels, proc,
            PARMCI_PutS(src, src_stride, dst, dst_stride, count, levels, proc));
}

int ARMCI_GetS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
               int proc)
{
    STRIDED(C_GETS, count, levels, proc,
            PARMCI_GetS(src, src_stride, dst, dst_stride, count, levels, proc));
}

int ARMCI_AccS(int type, void *scale, void *src, int src_stride[], void *dst, int dst_stride[],
               int count[], int levels, int proc)
{
    STRIDED(C_ACCS, count, levels, proc,
            PARMCI_AccS(type, scale, src, src_stride, dst, dst_stride, count, levels, proc));
}

int ARMCI_PutS_flag(void *src, int src_stride[], void *dst, int dst_stride[], int count[],
                    int levels, int *flag, int value, int proc)
{
    STRIDED(C_PUTS_FLAG, count, levels, proc,
            PARMCI_PutS_flag(src, src_stride, dst, dst_stride, count, levels, flag, value, proc));
}

int ARMCI_NbPutS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
                 int proc, armci_hdl_t *hdl)
{
    STRIDED(C_NBPUTS, count, levels, proc,
            PARMCI_NbPutS(src, src_stride, dst, dst_stride, count, levels, proc, hdl));
}

int ARMCI_NbGetS(void *src, int src_stride[], void *dst, int dst_stride[], int count[], int levels,
                 int proc, armci_hdl_t *hdl)
{
    STRIDED(C_NBGETS, count, levels, proc,
            PARMCI_NbGetS(src, src_stride, dst, dst_stride, count, levels, proc, hdl));
}

int ARMCI_NbAccS(int type, void *scale, void *src, int src_stride[], void *dst, int dst_stride[],
                 int count[], int levels, int proc, armci_hdl_t *hdl)
{
    STRIDED(C_NBACCS, count, levels, proc,
            PARMCI_NbAccS(type, scale, src, src_stride, dst, dst_stride, count, levels, proc, hdl));
}

int ARMCI_PutV(armci_giov_t *iov, int len, int proc)
{
    VECTOR(C_PUTV, iov, len, proc, PARMCI_PutV(iov, len, proc));
}

int ARMCI_GetV(armci_giov_t *iov, int len, int proc)
{
    VECTOR(C_GETV, iov, len, proc, PARMCI_GetV(iov, len, proc));
}

int ARMCI_AccV(int type, void *scale, armci_giov_t *iov, int len, int proc)
{
    VECTOR(C_ACCV, iov, len, proc, PARMCI_AccV(type, scale, iov, len, proc));
}

int ARMCI_NbPutV(armci_giov_t *iov, int len, int proc, armci_hdl_t *hdl)
{
    VECTOR(C_NBPUTV, iov, len, proc, PARMCI_NbPutV(iov, len, proc, hdl));
}

int ARMCI_NbGetV(armci_giov_t *iov, int len, int proc, armci_hdl_t *hdl)
{
    VECTOR(C_NBGETV, iov, len, proc, PARMCI_NbGetV(iov, len, proc, hdl));
}

int ARMCI_NbAccV(int type, void *scale, armci_giov_t *iov, int len, int proc, armci_hdl_t *hdl)
{
    VECTOR(C_NBACCV, iov, len, proc, PARMCI_NbAccV(type, scale, iov, len, proc, hdl));
}

int ARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc)
{
    int bytes = op == ARMCI_FETCH_AND_ADD_LONG || op == ARMCI_SWAP_LONG ? 8 : 4;
    CONTIGUOUS(C_RMW, bytes, proc, PARMCI_Rmw(op, ploc, prem, value, proc));
}

void ARMCI_Lock(int mutex, int proc)
{
    double t0 = now();
    PARMCI_Lock(mutex, proc);
    add(C_LOCK, where_of(proc), 0, 0, t0);
}

void ARMCI_Unlock(int mutex, int proc)
{
    double t0 = now();
    PARMCI_Unlock(mutex, proc);
    add(C_UNLOCK, where_of(proc), 0, 0, t0);
}

int ARMCI_Wait(armci_hdl_t *hdl)
{
    int rc;
    WAITING(C_WAIT, rc = PARMCI_Wait(hdl));
    return rc;
}

int ARMCI_WaitAll(void)
{
    int rc;
    WAITING(C_WAITALL, rc = PARMCI_WaitAll());
    return rc;
}

int ARMCI_WaitProc(int proc)
{
    int rc;
    WAITING(C_WAITPROC, rc = PARMCI_WaitProc(proc));
    return rc;
}

int ARMCI_Test(armci_hdl_t *hdl)
{
    int rc;
    WAITING(C_TEST, rc = PARMCI_Test(hdl));
    return rc;
}

void ARMCI_Fence(int proc)
{
    WAITING(C_FENCE, PARMCI_Fence(proc));
}

void ARMCI_AllFence(void)
{
    WAITING(C_ALLFENCE, PARMCI_AllFence());
}

void ARMCI_Barrier(void)
{
    WAITING(C_BARRIER, PARMCI_Barrier());
}

void armci_msg_barrier(void)
{
    WAITING(C_MSG_BARRIER, parmci_msg_barrier());
}
