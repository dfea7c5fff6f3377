#include "api/groups.h"

#include <stdlib.h>

#include "core/error.h"
#include "core/memstat.h"
#include "message.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"

/*
 * A group's SCOPE_NODE and SCOPE_MASTERS communicators, made on first use
 * with MPI_Comm_create_group: only the processes of the new communicator
 * take part, and they are exactly those calling the scoped collective
 * (non-masters never call SCOPE_MASTERS). Unused scopes cost nothing.
 */
struct group_scope {
    MPI_Comm comm; /* the group's */
    int scope;
    MPI_Comm sub;
    struct group_scope *next;
};

static struct group_scope *scopes;

#define SCOPE_TAG 0x5c0e /* MPI_Comm_create_group's tag, plus the scope */

static void scopes_remove(MPI_Comm comm)
{
    for (struct group_scope **link = &scopes; *link;) {
        struct group_scope *s = *link;
        if (s->comm != comm) {
            link = &s->next;
            continue;
        }
        *link = s->next;
        MPI_Comm_free(&s->sub);
        free(s);
    }
}

/* Group ranks of the members on my node, or of the first member of every node. */
static int scope_members(const ARMCI_Group *g, int scope, int *ranks)
{
    bool *seen = xcalloc((size_t)topo.num_nodes, sizeof(bool));
    int n = 0;
    for (int r = 0; r < g->size; r++) {
        int node = topo_node_of(group_abs(g, r));
        bool in = scope == SCOPE_NODE ? node == topo.my_node : !seen[node];
        seen[node] = true;
        if (in)
            ranks[n++] = r;
    }
    free(seen);
    return n;
}

MPI_Comm group_scope_comm(const ARMCI_Group *g, int scope)
{
    if (g->comm == rt.comm)
        return scope == SCOPE_NODE ? topo.node_comm : topo.master_comm;
    for (const struct group_scope *s = scopes; s; s = s->next)
        if (s->comm == g->comm && s->scope == scope)
            return s->sub;

    int *ranks = xmalloc(sizeof(int) * (size_t)g->size);
    int n = scope_members(g, scope, ranks);
    bool in = false;
    for (int i = 0; i < n; i++)
        in |= ranks[i] == g->rank;
    MPI_Comm sub = MPI_COMM_NULL;
    if (in) {
        MPI_Group all, part;
        MPI_Comm_group(g->comm, &all);
        MPI_Group_incl(all, n, ranks, &part);
        MPI_Comm_create_group(g->comm, part, SCOPE_TAG + scope, &sub);
        MPI_Group_free(&part);
        MPI_Group_free(&all);
    }
    free(ranks);
    if (sub == MPI_COMM_NULL)
        return MPI_COMM_NULL; /* a non-master asking for SCOPE_MASTERS */
    struct group_scope *s = xmalloc(sizeof(*s));
    *s = (struct group_scope){.comm = g->comm, .scope = scope, .sub = sub, .next = scopes};
    scopes = s;
    return sub;
}

/*
 * Rank maps: grp_to_abs[size] gives each member's world rank. abs_to_grp
 * (the name is ARMCI-MPI's) is not a world-sized map here: a handle that is
 * not NULL there is a live one, and for members it is grp_to_abs itself;
 * for a process outside the group it holds the member count and then the
 * members' world ranks (ARMCI_Absolute_id). The world group needs no map.
 */
static int world_marker;

static long map_bytes(const ARMCI_Group *g)
{
    if (g->abs_to_grp == &world_marker)
        return 0;
    if (g->grp_to_abs)
        return (long)sizeof(int) * g->size;
    return g->abs_to_grp ? (long)sizeof(int) * (g->abs_to_grp[0] + 1) : 0;
}

static void fill_maps(ARMCI_Group *g)
{
    MPI_Comm_rank(g->comm, &g->rank);
    MPI_Comm_size(g->comm, &g->size);
    g->grp_to_abs = xmalloc(sizeof(int) * g->size);
    MPI_Allgather(&rt.me, 1, MPI_INT, g->grp_to_abs, 1, MPI_INT, g->comm);
    g->abs_to_grp = g->grp_to_abs;
    memstat_add(MEM_GROUPS, map_bytes(g));
}

void groups_init_world(ARMCI_Group *g)
{
    g->comm = rt.comm;
    g->noncoll_pgroup_comm = MPI_COMM_NULL;
    MPI_Comm_rank(g->comm, &g->rank);
    MPI_Comm_size(g->comm, &g->size);
    g->grp_to_abs = NULL;
    g->abs_to_grp = &world_marker;
}

static void free_maps(ARMCI_Group *g)
{
    memstat_add(MEM_GROUPS, -map_bytes(g));
    if (g->abs_to_grp != &world_marker)
        free(g->grp_to_abs ? g->grp_to_abs : g->abs_to_grp);
    g->grp_to_abs = g->abs_to_grp = NULL;
}

void groups_fini(void)
{
    free_maps(&rt.world_group);
    while (scopes) {
        struct group_scope *s = scopes;
        scopes = s->next;
        MPI_Comm_free(&s->sub);
        free(s);
    }
}

int group_abs(const ARMCI_Group *g, int rank)
{
    return g->grp_to_abs ? g->grp_to_abs[rank] : rank;
}

bool group_is_member(const ARMCI_Group *g)
{
    return g->comm != MPI_COMM_NULL;
}

void group_require_member(const char *call, const ARMCI_Group *g)
{
    rt_require_init(call);
    check_ptr(call, "group", g);
    if (!group_is_member(g))
        armci_die(call, "argument group: process %d is not a member of this group", rt.me);
}

/* A handle ARMCI_Group_create returned, to a member or not (non-members have no comm). */
static void require_handle(const char *call, const ARMCI_Group *g)
{
    rt_require_init(call);
    check_ptr(call, "group", g);
    if (!g->abs_to_grp)
        armci_die(call, "argument group was not created by ARMCI_Group_create or was freed");
}

void ARMCI_Group_create_child(int grp_size, int *pid_list, ARMCI_Group *group_out,
                              ARMCI_Group *group_parent)
{
    static const char call[] = "ARMCI_Group_create_child";
    group_require_member(call, group_parent);
    check_ptr(call, "group_out", group_out);
    if (grp_size < 0 || grp_size > group_parent->size)
        armci_die(call, "argument grp_size=%d is not in [0, %d]", grp_size, group_parent->size);
    if (grp_size > 0)
        check_ptr(call, "pid_list", pid_list);
    for (int i = 0; i < grp_size; i++)
        if (pid_list[i] < 0 || pid_list[i] >= group_parent->size)
            armci_die(call, "argument pid_list[%d]=%d is not a rank of the parent group", i,
                      pid_list[i]);

    /* Collective over the parent: non-members get MPI_COMM_NULL. */
    MPI_Group parent, child;
    MPI_Comm_group(group_parent->comm, &parent);
    if (MPI_Group_incl(parent, grp_size, pid_list, &child) != MPI_SUCCESS)
        armci_die(call, "argument pid_list does not describe a valid group (duplicates?)");
    MPI_Comm comm;
    MPI_Comm_create(group_parent->comm, child, &comm);
    MPI_Group_free(&child);
    MPI_Group_free(&parent);

    *group_out = (ARMCI_Group){.comm = comm, .noncoll_pgroup_comm = MPI_COMM_NULL};
    if (comm != MPI_COMM_NULL) {
        fill_maps(group_out);
        return;
    }
    /*
     * Not a member: rank -1 and size 0, as ARMCI-MPI answers. The member
     * list is still known here, so ARMCI_Absolute_id works as in GA's ARMCI.
     */
    group_out->rank = -1;
    group_out->size = 0;
    group_out->abs_to_grp = xmalloc(sizeof(int) * (size_t)(grp_size + 1));
    group_out->abs_to_grp[0] = grp_size;
    for (int i = 0; i < grp_size; i++)
        group_out->abs_to_grp[i + 1] = group_abs(group_parent, pid_list[i]);
    memstat_add(MEM_GROUPS, map_bytes(group_out));
}

void ARMCI_Group_create(int grp_size, int *pid_list, ARMCI_Group *group_out)
{
    rt_require_init("ARMCI_Group_create");
    /* The parent is the default group, which set_default may have made one we are not in. */
    if (!group_is_member(&rt.default_group))
        armci_die("ARMCI_Group_create",
                  "the default group (ARMCI_Group_set_default) does not include process %d", rt.me);
    ARMCI_Group_create_child(grp_size, pid_list, group_out, &rt.default_group);
}

void ARMCI_Group_free(ARMCI_Group *group)
{
    check_ptr("ARMCI_Group_free", "group", group);
    if (group->comm == rt.comm)
        armci_die("ARMCI_Group_free", "the world group cannot be freed");
    if (group->comm != MPI_COMM_NULL) {
        scopes_remove(group->comm);
        MPI_Comm_free(&group->comm);
    }
    free_maps(group);
    group->rank = -1;
    group->size = 0;
}

/* Non-members get rank -1 and a non-zero return, as from ARMCI-MPI. */
int ARMCI_Group_rank(ARMCI_Group *group, int *rank)
{
    require_handle("ARMCI_Group_rank", group);
    check_ptr("ARMCI_Group_rank", "rank", rank);
    *rank = group->rank;
    return group->rank >= 0 ? 0 : 1;
}

void ARMCI_Group_size(ARMCI_Group *group, int *size)
{
    require_handle("ARMCI_Group_size", group);
    check_ptr("ARMCI_Group_size", "size", size);
    *size = group->size;
}

/* Any handle may become the default (as in both references); using it is checked later. */
void ARMCI_Group_set_default(ARMCI_Group *group)
{
    require_handle("ARMCI_Group_set_default", group);
    rt.default_group = *group;
}

void ARMCI_Group_get_default(ARMCI_Group *group_out)
{
    rt_require_init("ARMCI_Group_get_default");
    check_ptr("ARMCI_Group_get_default", "group_out", group_out);
    *group_out = rt.default_group;
}

void ARMCI_Group_get_world(ARMCI_Group *group_out)
{
    rt_require_init("ARMCI_Group_get_world");
    check_ptr("ARMCI_Group_get_world", "group_out", group_out);
    *group_out = rt.world_group;
}

int ARMCI_Absolute_id(ARMCI_Group *group, int group_rank)
{
    static const char call[] = "ARMCI_Absolute_id";
    require_handle(call, group);
    if (group_is_member(group)) {
        if (group_rank < 0 || group_rank >= group->size)
            armci_die(call, "argument group_rank=%d is not in [0, %d)", group_rank, group->size);
        return group_abs(group, group_rank);
    }
    if (group_rank >= 0 && group_rank < group->abs_to_grp[0])
        return group->abs_to_grp[group_rank + 1];
    armci_die(call, "argument group_rank=%d is not a rank of the group", group_rank);
}
