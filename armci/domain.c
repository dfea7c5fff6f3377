/* Topology queries of the public API: the SMP domain is the node. */
#include "armci.h"
#include "error.h"
#include "runtime.h"
#include "topology.h"

static void check_domain(const char *call, armci_domain_t domain)
{
    rt_require_init(call);
    if (domain != ARMCI_DOMAIN_SMP)
        armci_die(call, "argument domain=%d is not ARMCI_DOMAIN_SMP", domain);
}

static void check_node(const char *call, int id)
{
    if (id < 0 || id >= topo.num_nodes)
        armci_die(call, "argument id=%d is not a node id (job has %d nodes)", id, topo.num_nodes);
}

int armci_domain_nprocs(armci_domain_t domain, int id)
{
    check_domain("armci_domain_nprocs", domain);
    check_node("armci_domain_nprocs", id);
    return topo_node_nprocs(id);
}

int armci_domain_id(armci_domain_t domain, int glob_proc_id)
{
    check_domain("armci_domain_id", domain);
    check_proc("armci_domain_id", "glob_proc_id", glob_proc_id);
    return topo_node_of(glob_proc_id);
}

int armci_domain_glob_proc_id(armci_domain_t domain, int id, int loc_proc_id)
{
    check_domain("armci_domain_glob_proc_id", domain);
    check_node("armci_domain_glob_proc_id", id);
    if (loc_proc_id < 0 || loc_proc_id >= topo_node_nprocs(id))
        armci_die("armci_domain_glob_proc_id", "argument loc_proc_id=%d is not in [0, %d)",
                  loc_proc_id, topo_node_nprocs(id));
    return topo_node_rank(id, loc_proc_id);
}

int armci_domain_my_id(armci_domain_t domain)
{
    check_domain("armci_domain_my_id", domain);
    return topo.my_node;
}

int armci_domain_count(armci_domain_t domain)
{
    check_domain("armci_domain_count", domain);
    return topo.num_nodes;
}

int armci_domain_same_id(armci_domain_t domain, int proc)
{
    check_domain("armci_domain_same_id", domain);
    check_proc("armci_domain_same_id", "proc", proc);
    return topo_same_node(proc);
}

int ARMCI_Same_node(int proc)
{
    rt_require_init("ARMCI_Same_node");
    check_proc("ARMCI_Same_node", "proc", proc);
    return topo_same_node(proc);
}

/*
 * Global Arrays asks these to choose how it allocates; it was built and
 * tested against ARMCI-MPI, which answers 0, and its ARMCI_Malloc path is
 * what we serve. Same-node blocks are still shared memory underneath.
 */
int ARMCI_Uses_shm(void)
{
    return 0;
}

int ARMCI_Uses_shm_grp(ARMCI_Group *group)
{
    return 0;
}

void ARMCI_Set_shm_limit(unsigned long shmemlimit)
{
}
