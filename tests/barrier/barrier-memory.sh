#!/bin/sh
# barrier-memory.sh RUN_MPI TEST_BARRIER: the RDMA barrier keeps one partner address a step
# (log2 of the nodes, + 1 for a node beyond the largest power of two), not one a node: at 4,
# 5 and 8 single-process nodes each process counts 72, 72 and 96 bytes of barrier tables
# (report kind `sync`: 16 B where a partner's slots are and its 8-byte slot a step; one a
# node would grow with the nodes: 4, 5 and 8 entries).
run_mpi=$1 test=$2
report=$(mktemp)
trap 'rm -f "$report"' EXIT
fail=0
for case in 4:72 5:72 8:96; do
    np=${case%%:*} want=${case#*:}
    : >"$report"
    ARMCI_NODE_SIZE=1 ARMCI_CONN_REPORT=file:$report "$run_mpi" "$np" "$test" 50 >/dev/null 2>&1 ||
        { echo "FAIL: the barrier test failed at $np nodes"; exit 1; }
    got=$("$(dirname "$0")/../conn-report-field.sh" mem_sync_avg "$report")
    echo "$np nodes: barrier tables $got B a process (want $want)"
    [ "$got" = "$want" ] || fail=1
done
[ $fail -eq 0 ] || { echo "FAIL: the barrier's tables are not one entry a step"; exit 1; }
echo PASS
