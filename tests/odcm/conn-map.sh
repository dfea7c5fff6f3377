#!/bin/sh
# conn-map.sh RUN_MPI NP PROGRAM: the connection map (ARMCI_CONN_MAP) of a ring job holds exactly
# the ring's cells (each node's successor), and that of an all-to-all job with static connections
# the full matrix. PROGRAM is tests/odcm/test_patterns, which checks its own connection counts.
run_mpi=$1
np=$2
program=$3
here=$(dirname "$0")
map=$(mktemp)
trap 'rm -f "$map"' EXIT
# [ARMCI_CONNECT, the program's pattern, the map's expected pattern]
for run in "ondemand ring ring" "static alltoall static"; do
    set -- $run
    : >"$map"
    if ! ARMCI_CONNECT=$1 ARMCI_CONN_MAP=file:$map "$run_mpi" "$np" "$program" "$2" \
        >/dev/null 2>&1; then
        echo "the $2 job failed with ARMCI_CONNECT=$1"
        exit 1
    fi
    echo "ARMCI_CONNECT=$1, $2:"
    "$here/conn-map-check.py" "$map" "$3" || exit 1
done
