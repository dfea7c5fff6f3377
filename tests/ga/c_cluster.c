/*
 * GA suite, C: node (cluster) queries and the node-aware mirrored arrays.
 *
 * GA learns the node layout from armci_domain_*: GA_Cluster_nnodes,
 * GA_Cluster_nodeid, GA_Cluster_nprocs (for every node and for -1, which
 * GA's own ARMCI answers with the caller's node), GA_Cluster_procid and
 * GA_Cluster_proc_nodeid are checked against the layout ARMCI_NODE_SIZE
 * asks for (k consecutive ranks per node; 0 = one node). Mirrored arrays
 * (NGA_Create_config on GA_Pgroup_get_mirror()) keep one copy per node:
 * accumulates only reach the caller's node copy (checked), then
 * GA_Merge_mirrored sums the copies in place (across nodes GA does that with
 * armci_msg_gop_scope(SCOPE_MASTERS) between the node masters), and GA_Copy
 * turns the result into a distributed array.
 */
#include "gacheck.h"

#include <mpi.h>

#define L 16 /* elements of the mirrored vector */

static int node_size; /* processes per node, as the environment asks */

static int node_of(int p)
{
    return p / node_size;
}

static void test_queries(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT(GA_Nodeid() == rank && GA_Nnodes() == size, "GA_Nodeid/GA_Nnodes %d/%d, MPI %d/%d",
           GA_Nodeid(), GA_Nnodes(), rank, size);

    int nnodes = gat_expected_nodes();
    node_size = nnodes == 1 ? gat_nproc : (gat_nproc + nnodes - 1) / nnodes;
    EXPECT(GA_Cluster_nnodes() == nnodes, "GA_Cluster_nnodes = %d, expected %d",
           GA_Cluster_nnodes(), nnodes);
    EXPECT(GA_Cluster_nodeid() == node_of(gat_me), "GA_Cluster_nodeid = %d, expected %d",
           GA_Cluster_nodeid(), node_of(gat_me));
    for (int n = 0; n < nnodes; n++) {
        int first = n * node_size;
        int count = gat_nproc - first < node_size ? gat_nproc - first : node_size;
        EXPECT(GA_Cluster_nprocs(n) == count, "GA_Cluster_nprocs(%d) = %d, expected %d", n,
               GA_Cluster_nprocs(n), count);
        for (int i = 0; i < count; i++)
            EXPECT(GA_Cluster_procid(n, i) == first + i,
                   "GA_Cluster_procid(%d,%d) = %d, expected %d", n, i, GA_Cluster_procid(n, i),
                   first + i);
    }
    for (int p = 0; p < gat_nproc; p++)
        EXPECT(GA_Cluster_proc_nodeid(p) == node_of(p),
               "GA_Cluster_proc_nodeid(%d) = %d, expected %d", p, GA_Cluster_proc_nodeid(p),
               node_of(p));
}

/* Last, as an ARMCI that rejects -1 ends the program here. */
static void test_my_node_alias(void)
{
    int mine = GA_Cluster_nprocs(GA_Cluster_nodeid());
    int alias = GA_Cluster_nprocs(-1);
    EXPECT(alias == mine, "GA_Cluster_nprocs(-1) = %d, expected %d (my node)", alias, mine);
}

static void check_vector(int g, const double *want, const char *what)
{
    double got[L];
    int lo[1] = {0}, hi[1] = {L - 1}, ld[1] = {1};
    NGA_Get(g, lo, hi, got, ld);
    for (int k = 0; k < L; k++)
        EXPECT(got[k] == want[k], "%s: [%d] = %g, expected %g", what, k, got[k], want[k]);
}

static void test_mirrored(void)
{
    int dims[1] = {L};
    int g_m = NGA_Create_config(C_DBL, 1, dims, "mirrored", NULL, GA_Pgroup_get_mirror());
    int g_d = NGA_Create(C_DBL, 1, dims, "distributed", NULL);
    EXPECT(g_m != 0 && g_d != 0, "creating the arrays failed");
    EXPECT(GA_Is_mirrored(g_m) || GA_Cluster_nnodes() == 1, "array is not mirrored");
    GA_Zero(g_m);
    GA_Zero(g_d);
    GA_Sync();

    /* each process adds rank + 1 at [rank] and 1 at [L - 1] of its node's copy */
    double one = 1.0, v = gat_me + 1;
    int at[1] = {gat_me % (L - 1)}, last[1] = {L - 1}, ld[1] = {1};
    NGA_Acc(g_m, at, at, &v, ld, &one);
    NGA_Acc(g_m, last, last, &one, ld, &one);
    GA_Sync();

    double node_view[L] = {0}, merged[L] = {0};
    for (int p = 0; p < gat_nproc; p++) {
        merged[p % (L - 1)] += p + 1;
        merged[L - 1] += 1;
        if (node_of(p) == node_of(gat_me) || GA_Cluster_nnodes() == 1) {
            node_view[p % (L - 1)] += p + 1;
            node_view[L - 1] += 1;
        }
    }
    check_vector(g_m, node_view, "mirrored copy of my node");
    GA_Sync();

    GA_Merge_mirrored(g_m);
    GA_Sync();
    check_vector(g_m, merged, "GA_Merge_mirrored");
    /* a consistent mirrored array copies into a distributed one. (Not
       NGA_Merge_distr_patch: GA 5.8's C wrapper passes 1-based indices to a
       0-based bounds check and rejects every patch.) */
    GA_Copy(g_m, g_d);
    GA_Sync();
    check_vector(g_d, merged, "GA_Copy of the merged mirrored array");
    GA_Sync();
    GA_Destroy(g_d);
    GA_Destroy(g_m);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_queries();
    test_mirrored();
    test_my_node_alias();
    return gat_finish("c_cluster");
}
