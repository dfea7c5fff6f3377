#!/bin/sh
# A multi-process test cannot pass with fewer processes or nodes than it names:
#   test_launch_counts.sh RUN_MPI PROGRAM [OTHER_MPIS_LAUNCHER]
# 1. run-mpi.sh refuses a launcher of another MPI (MPIEXEC);
# 2. that launcher used directly starts 4 one-process jobs: ARMCI_Init stops
#    each, since ARMCI_TEST_EXPECT_NP=4 (what run-mpi.sh exports);
# 3. 4 processes on 2 virtual nodes stop when 3 nodes were expected.
# Without another MPI's launcher installed, 1 and 2 are skipped.
run_mpi=$1
prog=$2
other=$3
here=$(dirname "$0")
expect() { "$here/../expect-failure.sh" "$@" || exit 1; }
export ARMCI_CONN_REPORT=0

if [ -n "$other" ]; then
    MPIEXEC=$other expect "is a launcher of" "$run_mpi" 4 "$prog"
    # Open MPI's launcher as root, with more processes than cores (only for this
    # command: MPICH's processes fail silently with these variables set).
    expect "this job has 1 processes but ARMCI_TEST_EXPECT_NP=4" env ARMCI_TEST_EXPECT_NP=4 \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1 "$other" -n 4 "$prog"
else
    echo "no launcher of another MPI: mismatch checks skipped"
fi
ARMCI_NODE_SIZE=2 ARMCI_TEST_EXPECT_NODES=3 expect \
    "the 4 processes span 2 nodes but ARMCI_TEST_EXPECT_NODES=3" "$run_mpi" 4 "$prog"
echo "PASS: launcher mismatch refused, process and node counts asserted"
