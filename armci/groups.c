#include "groups.h"

#include <stdlib.h>

#include "error.h"
#include "runtime.h"
#include "util.h"

/* Rank maps for a group over comm: grp_to_abs[size], abs_to_grp[nprocs] (-1 = not a member). */
static void fill_maps(ARMCI_Group *g)
{
    MPI_Comm_rank(g->comm, &g->rank);
    MPI_Comm_size(g->comm, &g->size);
    g->grp_to_abs = xmalloc(sizeof(int) * g->size);
    MPI_Allgather(&rt.me, 1, MPI_INT, g->grp_to_abs, 1, MPI_INT, g->comm);
    g->abs_to_grp = xmalloc(sizeof(int) * rt.nprocs);
    for (int i = 0; i < rt.nprocs; i++)
        g->abs_to_grp[i] = -1;
    for (int i = 0; i < g->size; i++)
        g->abs_to_grp[g->grp_to_abs[i]] = i;
}

void groups_init_world(ARMCI_Group *g)
{
    g->comm = rt.comm;
    g->noncoll_pgroup_comm = MPI_COMM_NULL;
    fill_maps(g);
}

static void free_maps(ARMCI_Group *g)
{
    free(g->grp_to_abs);
    free(g->abs_to_grp);
    g->grp_to_abs = g->abs_to_grp = NULL;
}

void groups_fini(void)
{
    free_maps(&rt.world_group);
}

int group_abs(const ARMCI_Group *g, int rank)
{
    return g->grp_to_abs[rank];
}

static void check_group(const char *call, const ARMCI_Group *g)
{
    rt_require_init(call);
    check_ptr(call, "group", g);
    if (g->comm == MPI_COMM_NULL || !g->grp_to_abs)
        armci_die(call, "argument group is not a group this process belongs to");
}

void ARMCI_Group_create_child(int grp_size, int *pid_list, ARMCI_Group *group_out,
                              ARMCI_Group *group_parent)
{
    static const char call[] = "ARMCI_Group_create_child";
    check_group(call, group_parent);
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

    *group_out = (ARMCI_Group){.comm = comm, .noncoll_pgroup_comm = MPI_COMM_NULL, .rank = -1};
    if (comm != MPI_COMM_NULL)
        fill_maps(group_out);
}

void ARMCI_Group_create(int grp_size, int *pid_list, ARMCI_Group *group_out)
{
    ARMCI_Group_create_child(grp_size, pid_list, group_out, &rt.default_group);
}

void ARMCI_Group_free(ARMCI_Group *group)
{
    check_ptr("ARMCI_Group_free", "group", group);
    if (group->comm == rt.comm)
        armci_die("ARMCI_Group_free", "the world group cannot be freed");
    if (group->comm != MPI_COMM_NULL)
        MPI_Comm_free(&group->comm);
    free_maps(group);
    group->rank = -1;
    group->size = 0;
}

int ARMCI_Group_rank(ARMCI_Group *group, int *rank)
{
    check_group("ARMCI_Group_rank", group);
    check_ptr("ARMCI_Group_rank", "rank", rank);
    *rank = group->rank;
    return 0;
}

void ARMCI_Group_size(ARMCI_Group *group, int *size)
{
    check_group("ARMCI_Group_size", group);
    check_ptr("ARMCI_Group_size", "size", size);
    *size = group->size;
}

void ARMCI_Group_set_default(ARMCI_Group *group)
{
    check_group("ARMCI_Group_set_default", group);
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
    check_group("ARMCI_Absolute_id", group);
    if (group_rank < 0 || group_rank >= group->size)
        armci_die("ARMCI_Absolute_id", "argument group_rank=%d is not in [0, %d)", group_rank,
                  group->size);
    return group->grp_to_abs[group_rank];
}
