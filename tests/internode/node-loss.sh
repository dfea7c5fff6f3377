#!/bin/sh
# node-loss.sh RUN_MPI TEST_NODE_LOSS MODE: runs test_node_loss (4 processes,
# 2 virtual nodes) and passes when the survivors end with an error naming
# node 1 as lost, within the bound below (no hang), and the job leaves
# nothing in /dev/shm. The launcher is told not to end the job itself when
# node 1's processes die (Open MPI: orte_enable_recovery), as when a host
# vanishes: the survivors must notice on their own.
run_mpi=$1 prog=$2 mode=$3
# The bound scales with meson's --timeout-multiplier (MESON_TEST_ITERATION does not say it;
# the ThreadSanitizer stage sets NODE_LOSS_BOUND_SCALE=3, as it multiplies the timeouts).
bound=$((${NODE_LOSS_BOUND:-60} * ${NODE_LOSS_BOUND_SCALE:-1}))
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
OMPI_MCA_orte_enable_recovery=1 ARMCI_NODE_SIZE=2 ARMCI_VERBOSE=1 \
    timeout -k 5 "$bound" "$run_mpi" 4 "$prog" "$mode" >"$out" 2>&1
status=$?
took=$(($(date +%s) - start))
job=$(sed -n 's/.*job id \([0-9a-f]*\) .*/\1/p' "$out" | head -1)
fail() { echo "FAIL ($mode): $*"; grep -v '^ARMCI (rank' "$out" | tail -30; exit 1; }
[ $status -eq 124 ] || [ $status -eq 137 ] && fail "no end within ${bound}s: the survivors hang"
# (mpirun's own exit status says nothing here: under orte_enable_recovery it is 0 even
# after MPI_Abort; the survivors' error is what counts.)
grep -q "survived the loss" "$out" && fail "a survivor got through"
grep -q "ARMCI error (rank [01]): node 1 (.*) is lost" "$out" || fail "no survivor ended with an error naming node 1 as lost"
[ -n "$job" ] || fail "no job id in the verbose output"
left=$(ls /dev/shm | grep -- "-$job-" | tr '\n' ' ')
[ -z "$left" ] || fail "left in /dev/shm: $left"
echo "PASS ($mode): $(grep -o 'rank [01]): node 1 (.*) is lost' "$out" | head -1), job ended after ${took}s (node 1 died after about 3 s)"
