/*
 * Topology queries of the public API: the SMP domain is the node. As in
 * both references the domain argument is not looked at (SMP is the only
 * domain), and a negative node id means "my node", as in GA's ARMCI.
 */
#include "armci.h"
#include "core/error.h"
#include "core/runtime.h"
#include "core/topology.h"

static int node_id(const char *call, int id)
{
    rt_require_init(call);
    if (id < 0)
        return topo.my_node;
    if (id >= topo.num_nodes)
        armci_die(call, "argument id=%d is not a node id (job has %d nodes)", id, topo.num_nodes);
    return id;
}

/* Out-of-range ranks are on no node: both references answer 0 for them. */
static int same_node(int proc)
{
    return proc >= 0 && proc < rt.nprocs && topo_same_node(proc);
}

int armci_domain_nprocs(armci_domain_t domain, int id)
{
    return topo_node_nprocs(node_id("armci_domain_nprocs", id));
}

int armci_domain_id(armci_domain_t domain, int glob_proc_id)
{
    rt_require_init("armci_domain_id");
    check_proc("armci_domain_id", "glob_proc_id", glob_proc_id);
    return topo_node_of(glob_proc_id);
}

int armci_domain_glob_proc_id(armci_domain_t domain, int id, int loc_proc_id)
{
    int node = node_id("armci_domain_glob_proc_id", id);
    if (loc_proc_id < 0 || loc_proc_id >= topo_node_nprocs(node))
        armci_die("armci_domain_glob_proc_id", "argument loc_proc_id=%d is not in [0, %d)",
                  loc_proc_id, topo_node_nprocs(node));
    return topo_node_rank(node, loc_proc_id);
}

int armci_domain_my_id(armci_domain_t domain)
{
    rt_require_init("armci_domain_my_id");
    return topo.my_node;
}

int armci_domain_count(armci_domain_t domain)
{
    rt_require_init("armci_domain_count");
    return topo.num_nodes;
}

int armci_domain_same_id(armci_domain_t domain, int proc)
{
    rt_require_init("armci_domain_same_id");
    return same_node(proc);
}

int ARMCI_Same_node(int proc)
{
    rt_require_init("ARMCI_Same_node");
    return same_node(proc);
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
