/*
 * The armci_msg_* message-passing API over MPI. Scopes: SCOPE_ALL is the
 * whole job (or group), SCOPE_NODE the caller's node, SCOPE_MASTERS one
 * process per node (only masters call it). Roots are absolute ranks.
 * Op strings may come from Fortran without a NUL: they are compared as
 * prefixes, byte by byte, never read past what GA's ARMCI would read.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "armci.h"
#include "core/mutant.h"
#include "api/barrier.h"
#include "core/error.h"
#include "api/groups.h"
#include "message.h"
#include "api/messaging.h"
#include "api/profiling.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"

/* The job's communicator, usable before ARMCI_Init (GA asks for ranks early). */
static MPI_Comm world(void)
{
    return rt.initialized ? rt.comm : MPI_COMM_WORLD;
}

int armci_msg_me(void)
{
    int me;
    MPI_Comm_rank(world(), &me);
    return me;
}

int armci_msg_nproc(void)
{
    int n;
    MPI_Comm_size(world(), &n);
    return n;
}

void armci_msg_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}

double armci_timer(void)
{
    return MPI_Wtime();
}

/* A scope argument is checked alike everywhere it selects a collective. */
static void check_scope(const char *call, int scope)
{
    if (scope != SCOPE_ALL && scope != SCOPE_NODE && scope != SCOPE_MASTERS)
        armci_die(call, "argument scope=%d is not SCOPE_ALL, SCOPE_NODE or SCOPE_MASTERS", scope);
}

/*
 * Communicator for a scope within a group (NULL = world). MPI_COMM_NULL when
 * this process takes no part: a non-master in SCOPE_MASTERS returns at once,
 * as in GA's ARMCI (only masters call such collectives).
 */
static MPI_Comm scope_comm(const char *call, int scope, const ARMCI_Group *group)
{
    rt_require_init(call);
    check_scope(call, scope);
    if (!group)
        group = &rt.world_group;
    group_require_member(call, group);
    return scope == SCOPE_ALL ? group->comm : group_scope_comm(group, scope);
}

/* Rank within comm of the process with absolute rank abs_root. */
static int root_in(const char *call, MPI_Comm comm, int abs_root)
{
    check_proc(call, "root", abs_root);
    if (comm == rt.comm)
        return abs_root;
    int mine = rt.me, n;
    MPI_Comm_size(comm, &n);
    int *abs = xmalloc(sizeof(int) * n);
    MPI_Allgather(&mine, 1, MPI_INT, abs, 1, MPI_INT, comm);
    int root = -1;
    for (int i = 0; i < n; i++)
        if (abs[i] == abs_root)
            root = i;
    free(abs);
    if (root < 0)
        armci_die(call, "argument root=%d is not a member of the scope", abs_root);
    return root;
}

void armci_msg_snd(int tag, void *buffer, int len, int to)
{
    static const char call[] = "armci_msg_snd";
    rt_require_init(call);
    check_proc(call, "to", to);
    check_nonneg(call, "len", len);
    if (len)
        check_local(call, "buffer", buffer);
    MPI_Send(buffer, len, MPI_BYTE, to, tag, rt.comm);
}

void armci_msg_rcv(int tag, void *buffer, int buflen, int *msglen, int from)
{
    static const char call[] = "armci_msg_rcv";
    rt_require_init(call);
    check_proc(call, "from", from);
    check_nonneg(call, "buflen", buflen);
    if (buflen)
        check_local(call, "buffer", buffer);
    MPI_Status st;
    MPI_Recv(buffer, buflen, MPI_BYTE, from, tag, rt.comm, &st);
    if (msglen)
        MPI_Get_count(&st, MPI_BYTE, msglen);
}

int armci_msg_rcvany(int tag, void *buffer, int buflen, int *msglen)
{
    static const char call[] = "armci_msg_rcvany";
    rt_require_init(call);
    check_nonneg(call, "buflen", buflen);
    if (buflen)
        check_local(call, "buffer", buffer);
    MPI_Status st;
    MPI_Recv(buffer, buflen, MPI_BYTE, MPI_ANY_SOURCE, tag, rt.comm, &st);
    if (msglen)
        MPI_Get_count(&st, MPI_BYTE, msglen);
    return st.MPI_SOURCE;
}

void parmci_msg_barrier(void)
{
    rt_require_init("armci_msg_barrier");
    barrier_run();
}
PROFILED_MSG(barrier)

void parmci_msg_group_barrier(ARMCI_Group *group)
{
    group_require_member("armci_msg_group_barrier", group);
    if (group->comm == rt.comm)
        barrier_run();
    else
        MPI_Barrier(group->comm);
}
PROFILED_MSG(group_barrier)

/*
 * Binary tree over the scope, in absolute ranks; -1 where there is no such
 * process. As in GA's ARMCI: a non-master asking for SCOPE_MASTERS is in no
 * tree (-1 everywhere but the root), and any other scope value means
 * SCOPE_ALL (a local query, so nothing can hang on it).
 */
void armci_msg_bintree(int scope, int *Root, int *Up, int *Left, int *Right)
{
    static const char call[] = "armci_msg_bintree";
    rt_require_init(call);
    check_ptr(call, "Root", Root);
    check_ptr(call, "Up", Up);
    check_ptr(call, "Left", Left);
    check_ptr(call, "Right", Right);
    int n = rt.nprocs, me = rt.me;
    if (scope == SCOPE_NODE) {
        n = topo_node_nprocs(topo.my_node);
        me = topo.my_local;
    } else if (scope == SCOPE_MASTERS) {
        n = topo.num_nodes;
        me = topo_is_master() ? topo.my_node : -1;
    }
    int idx[4] = {0, me > 0 ? (me - 1) / 2 : -1, me >= 0 ? 2 * me + 1 : -1,
                  me >= 0 ? 2 * me + 2 : -1};
    int *out[4] = {Root, Up, Left, Right};
    for (int i = 0; i < 4; i++) {
        int k = idx[i];
        int abs = -1;
        if (k >= 0 && k < n)
            abs = scope == SCOPE_NODE      ? topo_node_rank(topo.my_node, k)
                  : scope == SCOPE_MASTERS ? topo_node_master(k)
                                           : k;
        *out[i] = abs;
    }
}

static void bcast_in(const char *call, int scope, void *buf, int len, int root,
                     const ARMCI_Group *group)
{
    check_nonneg(call, "len", len);
    MPI_Comm comm = scope_comm(call, scope, group);
    if (comm == MPI_COMM_NULL)
        return;
    int r = root_in(call, comm, root);
    if (len)
        check_local(call, "buffer", buf);
    MPI_Bcast(buf, len, MPI_BYTE, r, comm);
}

void armci_msg_bcast(void *buffer, int len, int root)
{
    bcast_in("armci_msg_bcast", SCOPE_ALL, buffer, len, root, NULL);
}

void armci_msg_brdcst(void *buffer, int len, int root)
{
    bcast_in("armci_msg_brdcst", SCOPE_ALL, buffer, len, root, NULL);
}

void armci_msg_bcast_scope(int scope, void *buffer, int len, int root)
{
    bcast_in("armci_msg_bcast_scope", scope, buffer, len, root, NULL);
}

void armci_msg_group_bcast_scope(int scope, void *buf, int len, int root, ARMCI_Group *group)
{
    check_ptr("armci_msg_group_bcast_scope", "group", group);
    bcast_in("armci_msg_group_bcast_scope", scope, buf, len, root, group);
}

void armci_msg_clus_brdcst(void *buf, int len)
{
    rt_require_init("armci_msg_clus_brdcst");
    bcast_in("armci_msg_clus_brdcst", SCOPE_NODE, buf, len, topo_node_master(topo.my_node), NULL);
}

/*
 * As in GA's ARMCI: the members of mastergroup with group ranks
 * grp_master .. grp_master + grp_clus_nproc - 1 receive grp_master's buffer.
 * Collective over mastergroup; each member passes its own node's range.
 */
void armci_grp_clus_brdcst(void *buf, int len, int grp_master, int grp_clus_nproc,
                           ARMCI_Group *mastergroup)
{
    static const char call[] = "armci_grp_clus_brdcst";
    group_require_member(call, mastergroup);
    check_nonneg(call, "len", len);
    check_nonneg(call, "grp_clus_nproc", grp_clus_nproc);
    if (grp_master < 0 || grp_master >= mastergroup->size)
        armci_die(call, "argument grp_master=%d is not a rank of mastergroup (size %d)", grp_master,
                  mastergroup->size);
    int me = mastergroup->rank;
    bool in = me >= grp_master && me - grp_master < grp_clus_nproc;
    MPI_Comm part;
    MPI_Comm_split(mastergroup->comm, in ? grp_master : MPI_UNDEFINED, me, &part);
    if (part == MPI_COMM_NULL)
        return;
    if (len)
        check_local(call, "buf", buf);
    MPI_Bcast(buf, len, MPI_BYTE, 0, part);
    MPI_Comm_free(&part);
}

/* ---- reductions ---- */

static MPI_Datatype mpi_type(const char *call, int type)
{
    switch (type) {
    case ARMCI_INT:
        return MPI_INT;
    case ARMCI_LONG:
        return MPI_LONG;
    case ARMCI_LONG_LONG:
        return MPI_LONG_LONG;
    case ARMCI_FLOAT:
        return MPI_FLOAT;
    case ARMCI_DOUBLE:
        return MPI_DOUBLE;
    }
    armci_die(call, "argument type=%d is not ARMCI_INT, _LONG, _LONG_LONG, _FLOAT or _DOUBLE",
              type);
}

static size_t type_size(int type)
{
    switch (type) {
    case ARMCI_INT:
        return sizeof(int);
    case ARMCI_LONG:
        return sizeof(long);
    case ARMCI_LONG_LONG:
        return sizeof(long long);
    case ARMCI_FLOAT:
        return sizeof(float);
    default:
        return sizeof(double);
    }
}

static const char *type_name(int type)
{
    return type == ARMCI_FLOAT ? "ARMCI_FLOAT" : "ARMCI_DOUBLE";
}

/*
 * True if op begins with word. Like strncmp(op, word, strlen(word)), it
 * stops at the first byte that differs; *seen grows to the number of bytes
 * of op read so far (known readable, for the error message).
 */
static bool op_is(const char *op, const char *word, size_t *seen)
{
    for (size_t i = 0; word[i]; i++) {
        if (i + 1 > *seen)
            *seen = i + 1;
        if (op[i] != word[i])
            return false;
    }
    return true;
}

enum gop {
    GOP_SUM,
    GOP_PROD,
    GOP_MAX,
    GOP_MIN,
    GOP_ABSMAX,
    GOP_ABSMIN,
    GOP_BOR,
    GOP_LAND,
    GOP_LOR,
    GOP_BAND
};

/*
 * GA's ARMCI's words in its order ("&&" before "&", "||" before "|"), so a
 * string is read exactly as far as GA's ARMCI and ARMCI-MPI read it, and
 * "maxmin..." or "absmax " select what they select there.
 */
static const struct {
    const char *word;
    enum gop op;
} gop_words[] = {
    {"+", GOP_SUM},         {"*", GOP_PROD},        {"max", GOP_MAX}, {"min", GOP_MIN},
    {"absmax", GOP_ABSMAX}, {"absmin", GOP_ABSMIN}, {"or", GOP_BOR},  {"&&", GOP_LAND},
    {"land", GOP_LAND},     {"||", GOP_LOR},        {"lor", GOP_LOR}, {"&", GOP_BAND},
    {"band", GOP_BAND},     {"|", GOP_BOR},         {"bor", GOP_BOR},
};

/* The MPI operation for op on type; *absolute: reduce magnitudes (absmax, absmin). */
static MPI_Op mpi_op(const char *call, const char *op, int type, bool *absolute)
{
    static const MPI_Op ops[] = {
        [GOP_SUM] = MPI_SUM,    [GOP_PROD] = MPI_PROD,  [GOP_MAX] = MPI_MAX, [GOP_MIN] = MPI_MIN,
        [GOP_ABSMAX] = MPI_MAX, [GOP_ABSMIN] = MPI_MIN, [GOP_BOR] = MPI_BOR, [GOP_LAND] = MPI_LAND,
        [GOP_LOR] = MPI_LOR,    [GOP_BAND] = MPI_BAND,
    };
    check_ptr(call, "op", op);
    size_t seen = 0;
    size_t i = 0;
    while (i < ARRAY_SIZE(gop_words) && !op_is(op, gop_words[i].word, &seen))
        i++;
    if (i == ARRAY_SIZE(gop_words)) {
        char shown[24];
        safe_prefix(op, seen, shown, sizeof(shown));
        armci_die(call,
                  "argument op=\"%s\" is not +, *, max, min, absmax, absmin, or, &&, land, ||, "
                  "lor, &, band, | or bor",
                  shown);
    }
    enum gop g = gop_words[i].op;
    bool integral = type == ARMCI_INT || type == ARMCI_LONG || type == ARMCI_LONG_LONG;
    /* Neither reference defines the bitwise and logical operators on floating types. */
    if (g >= GOP_BOR && !integral)
        armci_die(call, "argument op=\"%s\" is bitwise or logical: not defined for %s",
                  gop_words[i].word, type_name(type));
    *absolute = g == GOP_ABSMAX || g == GOP_ABSMIN;
#if ARMCI_MUTANT_IS(msg_op_ignored)
    return MPI_SUM;
#endif
    return ops[g];
}

/* absmax/absmin reduce |x|: replace the input by its magnitude first. */
static void make_abs(int type, void *x, int n)
{
    for (int i = 0; i < n; i++) {
        switch (type) {
        case ARMCI_INT:
            ((int *)x)[i] = abs(((int *)x)[i]);
            break;
        case ARMCI_LONG:
            ((long *)x)[i] = labs(((long *)x)[i]);
            break;
        case ARMCI_LONG_LONG:
            ((long long *)x)[i] = llabs(((long long *)x)[i]);
            break;
        case ARMCI_FLOAT:
            ((float *)x)[i] = fabsf(((float *)x)[i]);
            break;
        case ARMCI_DOUBLE:
            ((double *)x)[i] = fabs(((double *)x)[i]);
            break;
        }
    }
}

/* What an MPI reduction needs, derived from the armci_msg arguments (checked). */
struct reduction {
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm;
};

/* False when there is nothing to do here (n == 0, or not part of the scope). */
static bool reduction_begin(const char *call, int scope, void *x, int n, const char *op, int type,
                            const ARMCI_Group *group, struct reduction *r)
{
    check_nonneg(call, "n", n);
    r->type = mpi_type(call, type);
    bool absolute;
    r->op = mpi_op(call, op, type, &absolute);
    r->comm = scope_comm(call, scope, group);
    if (r->comm == MPI_COMM_NULL || n == 0)
        return false;
    check_local(call, "x", x);
    if (absolute)
        make_abs(type, x, n);
    return true;
}

static void gop_in(const char *call, int scope, void *x, int n, const char *op, int type,
                   const ARMCI_Group *group)
{
    struct reduction r;
    if (reduction_begin(call, scope, x, n, op, type, group, &r))
        MPI_Allreduce(MPI_IN_PLACE, x, n, r.type, r.op, r.comm);
}

void armci_msg_gop_scope(int scope, void *x, int n, char *op, int type)
{
    gop_in("armci_msg_gop_scope", scope, x, n, op, type, NULL);
}

void armci_msg_group_gop_scope(int scope, void *x, int n, char *op, int type, ARMCI_Group *group)
{
    check_ptr("armci_msg_group_gop_scope", "group", group);
    gop_in("armci_msg_group_gop_scope", scope, x, n, op, type, group);
}

#define GOP_FAMILY(suffix, T, ARMCI_T)                                           \
    void armci_msg_##suffix(T *x, int n, char *op)                               \
    {                                                                            \
        gop_in("armci_msg_" #suffix, SCOPE_ALL, x, n, op, ARMCI_T, NULL);        \
    }                                                                            \
    void armci_msg_group_##suffix(T *x, int n, char *op, ARMCI_Group *group)     \
    {                                                                            \
        check_ptr("armci_msg_group_" #suffix, "group", group);                   \
        gop_in("armci_msg_group_" #suffix, SCOPE_ALL, x, n, op, ARMCI_T, group); \
    }                                                                            \
    void armci_msg_clus_##suffix(T *x, int n, char *op)                          \
    {                                                                            \
        gop_in("armci_msg_clus_" #suffix, SCOPE_NODE, x, n, op, ARMCI_T, NULL);  \
    }

GOP_FAMILY(igop, int, ARMCI_INT)
GOP_FAMILY(lgop, long, ARMCI_LONG)
GOP_FAMILY(llgop, long long, ARMCI_LONG_LONG)
GOP_FAMILY(fgop, float, ARMCI_FLOAT)
GOP_FAMILY(dgop, double, ARMCI_DOUBLE)

/* armci_msg_reduce: like gop, but only the scope's first process gets the result. */
void armci_msg_reduce_scope(int scope, void *x, int n, char *op, int type)
{
    struct reduction r;
    if (!reduction_begin("armci_msg_reduce_scope", scope, x, n, op, type, NULL, &r))
        return;
    int me;
    MPI_Comm_rank(r.comm, &me);
    MPI_Reduce(me == 0 ? MPI_IN_PLACE : x, x, n, r.type, r.op, 0, r.comm);
}

void armci_msg_reduce(void *x, int n, char *op, int type)
{
    armci_msg_reduce_scope(SCOPE_ALL, x, n, op, type);
}

/*
 * armci_msg_sel: x is an n-byte record whose first field (of `type`) is the
 * key; the record with the smallest ("min") or largest ("max") key among the
 * processes that contribute is returned to everyone.
 */
struct sel_record {
    int contribute;
    int type;
    int max; /* 1: select the largest key */
    int pad;
    double data[]; /* the caller's n bytes */
};

static int sel_cmp(int type, const void *a, const void *b)
{
    switch (type) {
    case ARMCI_INT:
        return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
    case ARMCI_LONG:
        return (*(const long *)a > *(const long *)b) - (*(const long *)a < *(const long *)b);
    case ARMCI_LONG_LONG:
        return (*(const long long *)a > *(const long long *)b) -
               (*(const long long *)a < *(const long long *)b);
    case ARMCI_FLOAT:
        return (*(const float *)a > *(const float *)b) - (*(const float *)a < *(const float *)b);
    default:
        return (*(const double *)a > *(const double *)b) -
               (*(const double *)a < *(const double *)b);
    }
}

/* One record against another: b becomes a if a wins. */
static void sel_pick(const struct sel_record *a, struct sel_record *b, size_t size)
{
    if (!a->contribute)
        return;
    int c = b->contribute ? sel_cmp(a->type, a->data, b->data) : 0;
    if (!b->contribute || (a->max ? c > 0 : c < 0))
        memcpy(b, a, size);
}

/*
 * The MPI op: *len elements of *dt, each one whole record (armci_msg_sel reduces one element
 * of a contiguous type the size of a record). With MPI_BYTE elements MPI may hand the op
 * slices of a large buffer, and a slice's "header" would be data bytes.
 */
static void sel_combine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size;
    MPI_Type_size(*dt, &size);
    for (int i = 0; i < *len; i++)
        sel_pick((const struct sel_record *)((char *)in + (size_t)i * (size_t)size),
                 (struct sel_record *)((char *)inout + (size_t)i * (size_t)size), (size_t)size);
}

static MPI_Op sel_op = MPI_OP_NULL;

void message_init(void)
{
    MPI_Op_create(sel_combine, 1, &sel_op);
}

void message_fini(void)
{
    if (sel_op != MPI_OP_NULL)
        MPI_Op_free(&sel_op);
}

/* "min..." selects the smallest key, "max..." the largest: prefixes, as in both references. */
static bool sel_is_max(const char *call, const char *op)
{
    check_ptr(call, "op", op);
    size_t seen = 0;
    if (op_is(op, "min", &seen))
        return false;
    if (op_is(op, "max", &seen))
        return true;
    char shown[24];
    safe_prefix(op, seen, shown, sizeof(shown));
    armci_die(call, "argument op=\"%s\" is not \"min\" or \"max\"", shown);
}

void armci_msg_sel_scope(int scope, void *x, int n, char *op, int type, int contribute)
{
    static const char call[] = "armci_msg_sel_scope";
    check_nonneg(call, "n", n);
    mpi_type(call, type);
    bool max = sel_is_max(call, op);
    /* The key is read from the record: a shorter record would be read past its end. */
    if ((size_t)n < type_size(type))
        armci_die(call, "argument n=%d is smaller than the key type (%zu bytes)", n,
                  type_size(type));
    /* Record and header travel as one MPI element of an int-sized length. */
    if ((size_t)n > INT_MAX - sizeof(struct sel_record))
        armci_die(call, "argument n=%d is too large for one record", n);
    MPI_Comm comm = scope_comm(call, scope, NULL);
    if (comm == MPI_COMM_NULL)
        return;
    check_local(call, "x", x);

    size_t rec_size = sizeof(struct sel_record) + (size_t)n;
    struct sel_record *in = xcalloc(1, rec_size), *out = xcalloc(1, rec_size);
    *in = (struct sel_record){.contribute = contribute != 0, .type = type, .max = max};
    memcpy(in->data, x, (size_t)n);
    MPI_Datatype record;
    MPI_Type_contiguous((int)rec_size, MPI_BYTE, &record);
    MPI_Type_commit(&record);
    MPI_Allreduce(in, out, 1, record, sel_op, comm);
    MPI_Type_free(&record);
    if (out->contribute)
        memcpy(x, out->data, (size_t)n);
    free(in);
    free(out);
}

void armci_msg_sel(void *x, int n, char *op, int type, int contribute)
{
    armci_msg_sel_scope(SCOPE_ALL, x, n, op, type, contribute);
}

/*
 * GA's ARMCI sums the n pointers over the group (the caller zeroes all but
 * its own). With n == group size everyone simply gets everyone's own entry,
 * the same answer without depending on the zeroes; other n keep the sum.
 */
static void exchange_in(const char *call, void **ptrs, int n, const ARMCI_Group *group)
{
    group_require_member(call, group);
    check_nonneg(call, "n", n);
    if (n == 0)
        return;
    check_local(call, "ptr_arr", ptrs);
    if (n == group->size) {
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ptrs, sizeof(void *), MPI_BYTE,
                      group->comm);
        return;
    }
    MPI_Datatype word = sizeof(void *) == sizeof(uint64_t) ? MPI_UINT64_T : MPI_UINT32_T;
    MPI_Allreduce(MPI_IN_PLACE, ptrs, n, word, MPI_SUM, group->comm);
}

void armci_exchange_address(void *ptr_ar[], int n)
{
    rt_require_init("armci_exchange_address");
    exchange_in("armci_exchange_address", ptr_ar, n, &rt.world_group);
}

void armci_exchange_address_grp(void *ptr_arr[], int n, ARMCI_Group *group)
{
    exchange_in("armci_exchange_address_grp", ptr_arr, n, group);
}
