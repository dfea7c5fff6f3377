/*
 * The armci_msg_* message-passing API over MPI: ranks, point to point,
 * barriers, broadcasts and the address exchange (the reductions, gop, reduce
 * and sel, are in message_reduce.c). Scopes: SCOPE_ALL is the
 * whole job (or group), SCOPE_NODE the caller's node, SCOPE_MASTERS one
 * process per node (only masters call it). Roots are absolute ranks.
 * Op strings may come from Fortran without a NUL: they are compared as
 * prefixes, byte by byte, never read past what GA's ARMCI would read.
 */
#include <stdlib.h>

#include "armci.h"
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

MPI_Comm message_scope_comm(const char *call, int scope, const ARMCI_Group *group)
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
    MPI_Comm comm = message_scope_comm(call, scope, group);
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
