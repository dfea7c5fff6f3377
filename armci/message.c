/*
 * The armci_msg_* message-passing API over MPI. Scopes: SCOPE_ALL is the
 * whole job (or group), SCOPE_NODE the caller's node, SCOPE_MASTERS one
 * process per node (only masters call it). Roots are absolute ranks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "armci.h"
#include "barrier.h"
#include "error.h"
#include "message.h"
#include "messaging.h"
#include "profiling.h"
#include "runtime.h"
#include "topology.h"
#include "util.h"

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

/*
 * Communicator for a scope within a group (NULL = world). *owned is set when
 * the caller must free it. Returns MPI_COMM_NULL if the caller is not in it.
 */
static MPI_Comm scope_comm(const char *call, int scope, const ARMCI_Group *group, bool *owned)
{
    rt_require_init(call);
    *owned = false;
    if (!group || group->comm == rt.comm) {
        switch (scope) {
        case SCOPE_ALL:
            return rt.comm;
        case SCOPE_NODE:
            return topo.node_comm;
        case SCOPE_MASTERS:
            if (!topo_is_master())
                armci_die(call, "SCOPE_MASTERS called by rank %d, which is not a node master",
                          rt.me);
            return topo.master_comm;
        }
        armci_die(call, "argument scope=%d is not SCOPE_ALL, SCOPE_NODE or SCOPE_MASTERS", scope);
    }

    check_ptr(call, "group", group);
    if (scope == SCOPE_ALL)
        return group->comm;
    if (scope != SCOPE_NODE && scope != SCOPE_MASTERS)
        armci_die(call, "argument scope=%d is not SCOPE_ALL, SCOPE_NODE or SCOPE_MASTERS", scope);
    /* Members of the group on my node; for MASTERS, the first such member of every node. */
    MPI_Comm node_part;
    MPI_Comm_split(group->comm, topo.my_node, group->rank, &node_part);
    if (scope == SCOPE_NODE) {
        *owned = true;
        return node_part;
    }
    int node_rank;
    MPI_Comm_rank(node_part, &node_rank);
    MPI_Comm_free(&node_part);
    MPI_Comm masters;
    MPI_Comm_split(group->comm, node_rank == 0 ? 0 : MPI_UNDEFINED, group->rank, &masters);
    *owned = masters != MPI_COMM_NULL;
    return masters;
}

static void release_comm(MPI_Comm *comm, bool owned)
{
    if (owned)
        MPI_Comm_free(comm);
}

/* Rank within comm of the process with absolute rank abs_root. */
static int root_in(const char *call, MPI_Comm comm, int abs_root)
{
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
    rt_require_init("armci_msg_snd");
    check_proc("armci_msg_snd", "to", to);
    check_nonneg("armci_msg_snd", "len", len);
    MPI_Send(buffer, len, MPI_BYTE, to, tag, rt.comm);
}

void armci_msg_rcv(int tag, void *buffer, int buflen, int *msglen, int from)
{
    rt_require_init("armci_msg_rcv");
    check_proc("armci_msg_rcv", "from", from);
    check_nonneg("armci_msg_rcv", "buflen", buflen);
    MPI_Status st;
    MPI_Recv(buffer, buflen, MPI_BYTE, from, tag, rt.comm, &st);
    if (msglen)
        MPI_Get_count(&st, MPI_BYTE, msglen);
}

int armci_msg_rcvany(int tag, void *buffer, int buflen, int *msglen)
{
    rt_require_init("armci_msg_rcvany");
    check_nonneg("armci_msg_rcvany", "buflen", buflen);
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
    rt_require_init("armci_msg_group_barrier");
    check_ptr("armci_msg_group_barrier", "group", group);
    if (group->comm == rt.comm)
        barrier_run();
    else
        MPI_Barrier(group->comm);
}
PROFILED_MSG(group_barrier)

/* Binary tree over the scope, in absolute ranks; -1 where there is no such process. */
void armci_msg_bintree(int scope, int *Root, int *Up, int *Left, int *Right)
{
    static const char call[] = "armci_msg_bintree";
    rt_require_init(call);
    int n, me;
    if (scope == SCOPE_ALL) {
        n = rt.nprocs;
        me = rt.me;
    } else if (scope == SCOPE_NODE) {
        n = topo_node_nprocs(topo.my_node);
        me = topo.my_local;
    } else if (scope == SCOPE_MASTERS) {
        n = topo.num_nodes;
        me = topo.my_node;
    } else {
        armci_die(call, "argument scope=%d is not SCOPE_ALL, SCOPE_NODE or SCOPE_MASTERS", scope);
    }
    int idx[4] = {0, me ? (me - 1) / 2 : -1, 2 * me + 1, 2 * me + 2};
    int *out[4] = {Root, Up, Left, Right};
    for (int i = 0; i < 4; i++) {
        int k = idx[i];
        int abs = -1;
        if (k >= 0 && k < n)
            abs = scope == SCOPE_ALL    ? k
                  : scope == SCOPE_NODE ? topo_node_rank(topo.my_node, k)
                                        : topo_node_master(k);
        *out[i] = abs;
    }
}

static void bcast_in(const char *call, int scope, void *buf, int len, int root,
                     const ARMCI_Group *group)
{
    check_nonneg(call, "len", len);
    bool owned;
    MPI_Comm comm = scope_comm(call, scope, group, &owned);
    if (comm == MPI_COMM_NULL)
        return;
    MPI_Bcast(buf, len, MPI_BYTE, root_in(call, comm, root), comm);
    release_comm(&comm, owned);
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

void armci_grp_clus_brdcst(void *buf, int len, int grp_master, int grp_clus_nproc,
                           ARMCI_Group *mastergroup)
{
    check_ptr("armci_grp_clus_brdcst", "mastergroup", mastergroup);
    bcast_in("armci_grp_clus_brdcst", SCOPE_NODE, buf, len, grp_master, mastergroup);
}

/* ---- reductions ---- */

static MPI_Datatype mpi_type(const char *call, int type, size_t *size)
{
    switch (type) {
    case ARMCI_INT:
        *size = sizeof(int);
        return MPI_INT;
    case ARMCI_LONG:
        *size = sizeof(long);
        return MPI_LONG;
    case ARMCI_LONG_LONG:
        *size = sizeof(long long);
        return MPI_LONG_LONG;
    case ARMCI_FLOAT:
        *size = sizeof(float);
        return MPI_FLOAT;
    case ARMCI_DOUBLE:
        *size = sizeof(double);
        return MPI_DOUBLE;
    }
    armci_die(call, "argument type=%d is not ARMCI_INT, _LONG, _LONG_LONG, _FLOAT or _DOUBLE",
              type);
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

static MPI_Op mpi_op(const char *call, const char *op, int type, bool *absolute)
{
    *absolute = false;
    if (!op)
        armci_die(call, "argument op is a null pointer");
    if (!strcmp(op, "+"))
        return MPI_SUM;
    if (!strcmp(op, "*"))
        return MPI_PROD;
    if (!strcmp(op, "max"))
        return MPI_MAX;
    if (!strcmp(op, "min"))
        return MPI_MIN;
    if (!strcmp(op, "absmax") || !strcmp(op, "absmin")) {
        *absolute = true;
        return op[3] == 'm' && op[4] == 'a' ? MPI_MAX : MPI_MIN;
    }
    bool integral = type == ARMCI_INT || type == ARMCI_LONG || type == ARMCI_LONG_LONG;
    if (integral && (!strcmp(op, "or") || !strcmp(op, "|")))
        return MPI_BOR;
    if (integral && (!strcmp(op, "and") || !strcmp(op, "&")))
        return MPI_BAND;
    armci_die(call, "argument op=\"%s\" is not +, *, max, min, absmax or absmin", op);
}

/* What an MPI reduction needs, derived from the armci_msg arguments (checked). */
struct reduction {
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm; /* MPI_COMM_NULL: nothing to do here */
    bool owned;
};

static bool reduction_begin(const char *call, int scope, void *x, int n, const char *op, int type,
                            const ARMCI_Group *group, struct reduction *r)
{
    check_nonneg(call, "n", n);
    size_t size;
    r->type = mpi_type(call, type, &size);
    bool absolute;
    r->op = mpi_op(call, op, type, &absolute);
    r->comm = scope_comm(call, scope, group, &r->owned);
    if (r->comm == MPI_COMM_NULL || n == 0) {
        release_comm(&r->comm, r->owned);
        return false;
    }
    check_ptr(call, "x", x);
    if (absolute)
        make_abs(type, x, n);
    return true;
}

static void gop_in(const char *call, int scope, void *x, int n, const char *op, int type,
                   const ARMCI_Group *group)
{
    struct reduction r;
    if (!reduction_begin(call, scope, x, n, op, type, group, &r))
        return;
    MPI_Allreduce(MPI_IN_PLACE, x, n, r.type, r.op, r.comm);
    release_comm(&r.comm, r.owned);
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
    release_comm(&r.comm, r.owned);
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

static void sel_combine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    struct sel_record *a = in, *b = inout;
    if (!a->contribute)
        return;
    int c = b->contribute ? sel_cmp(a->type, a->data, b->data) : 0;
    if (!b->contribute || (a->max ? c > 0 : c < 0))
        memcpy(b, a, (size_t)*len);
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

void armci_msg_sel_scope(int scope, void *x, int n, char *op, int type, int contribute)
{
    static const char call[] = "armci_msg_sel_scope";
    check_nonneg(call, "n", n);
    size_t size;
    mpi_type(call, type, &size);
    if (!op || (strcmp(op, "min") && strcmp(op, "max")))
        armci_die(call, "argument op=\"%s\" is not \"min\" or \"max\"", op ? op : "(null)");
    if ((size_t)n < size)
        armci_die(call, "argument n=%d is smaller than the key type (%zu bytes)", n, size);
    check_ptr(call, "x", x);
    bool owned;
    MPI_Comm comm = scope_comm(call, scope, NULL, &owned);
    if (comm == MPI_COMM_NULL)
        return;

    size_t rec_size = sizeof(struct sel_record) + (size_t)n;
    struct sel_record *in = xcalloc(1, rec_size), *out = xcalloc(1, rec_size);
    *in = (struct sel_record){.contribute = contribute != 0, .type = type, .max = op[1] == 'a'};
    memcpy(in->data, x, (size_t)n);
    MPI_Allreduce(in, out, (int)rec_size, MPI_BYTE, sel_op, comm);
    if (out->contribute)
        memcpy(x, out->data, (size_t)n);
    free(in);
    free(out);
}

void armci_msg_sel(void *x, int n, char *op, int type, int contribute)
{
    armci_msg_sel_scope(SCOPE_ALL, x, n, op, type, contribute);
}

/* Everyone gets everyone's ptr_ar[me]. */
void armci_exchange_address(void *ptr_ar[], int n)
{
    rt_require_init("armci_exchange_address");
    if (n != rt.nprocs)
        armci_die("armci_exchange_address", "argument n=%d is not the number of processes %d", n,
                  rt.nprocs);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ptr_ar, sizeof(void *), MPI_BYTE, rt.comm);
}

void armci_exchange_address_grp(void *ptr_arr[], int n, ARMCI_Group *group)
{
    rt_require_init("armci_exchange_address_grp");
    check_ptr("armci_exchange_address_grp", "group", group);
    if (n != group->size)
        armci_die("armci_exchange_address_grp", "argument n=%d is not the group size %d", n,
                  group->size);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ptr_arr, sizeof(void *), MPI_BYTE,
                  group->comm);
}
