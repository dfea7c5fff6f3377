#!/bin/sh
# ARMCI_WAIT (docs/ENVIRONMENT.md, core/wait_policy.h): test_wait_policy.sh RUN_MPI PROG
# - auto yields when the job's ranks and data servers on this host outnumber the
#   CPUs they may use, and spins otherwise: counted under taskset on 1 and 2 CPUs;
# - spin and yield are taken as said, whatever the count;
# - a job runs to the end under each (PROG checks its own results).
run_mpi=$1 prog=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/armci-wait.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
ok() { echo "ok: $*"; }
# expect NAME CHOICE CPUS NP NODE_SIZE: the choice ("yield" or "spin") the job reports
expect() {
    name=$1 want=$2 cpus=$3 np=$4 ns=$5
    if ! ARMCI_VERBOSE=1 ARMCI_NODE_SIZE=$ns taskset -c "$cpus" "$run_mpi" "$np" "$prog" \
        >"$work/$name.out" 2>"$work/$name.err"; then
        fail "$name: the job failed"
        cat "$work/$name.err"
        return
    fi
    case $want in
    yield) line="waiting threads yield their core" ;;
    spin) line="waiting threads spin with a pause" ;;
    esac
    if grep -q "$line" "$work/$name.err"; then
        ok "$name: $want"
    else
        fail "$name: expected $want; the job said:"
        grep "waiting threads\|threads of the job" "$work/$name.err"
    fi
}

# 2 ranks on 1 CPU (one node: no data server): 2 threads > 1 CPU.
ARMCI_WAIT=auto expect one-cpu yield 0 2 0
# 4 ranks in 2 virtual nodes and their 2 data servers on 1 CPU.
ARMCI_WAIT=auto expect vnodes-one-cpu yield 0 4 2
ARMCI_WAIT=spin expect forced-spin spin 0 4 2
if [ "$(nproc)" -ge 2 ]; then
    # 2 ranks on 2 CPUs, one node: a CPU each.
    ARMCI_WAIT=auto expect two-cpus spin 0,1 2 0
    # 2 ranks in 2 virtual nodes and their 2 data servers: 4 threads on 2 CPUs.
    ARMCI_WAIT=auto expect vnodes-two-cpus yield 0,1 2 1
    ARMCI_WAIT=yield expect forced-yield yield 0,1 2 0
else
    echo "skip: this host has one CPU (the two-CPU cases)"
fi
[ "$fails" = 0 ] || exit 1
