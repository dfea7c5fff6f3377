#!/bin/sh
# report-memory.sh RUN_MPI NP PROGRAM [ARGS...]: the connection memory a job reports does not
# follow the credit cap. A server QP's send queue holds entries for at most 8 credits
# (odcm/cm_server.c, cm_server_send_depth); the cap itself (ARMCI_SERVER_CREDITS) may be far
# larger. The same job with the cap at 8 and at 1024 must report the same connection memory,
# on demand and for static mode (mem_bytes, static_mem_bytes).
run_mpi=$1
shift
report=$(mktemp)
trap 'rm -f "$report"' EXIT
field() { "$(dirname "$0")/../conn-report-field.sh" "$1" "$report"; }
first=""
for credits in 8 1024; do
    : >"$report"
    if ! ARMCI_SERVER_CREDITS=$credits ARMCI_CONN_REPORT=file:$report "$run_mpi" "$@" >/dev/null 2>&1; then
        echo "the job failed with ARMCI_SERVER_CREDITS=$credits"
        exit 1
    fi
    mem="$(field mem_bytes) $(field static_mem_bytes)"
    if [ "$mem" = " " ]; then
        echo "no connection memory in the report with ARMCI_SERVER_CREDITS=$credits"
        exit 1
    fi
    echo "ARMCI_SERVER_CREDITS=$credits: mem_bytes, static_mem_bytes = $mem"
    [ -n "$first" ] || first=$mem
done
if [ "$mem" != "$first" ]; then
    echo "connection memory follows the credit cap: server QPs grew with ARMCI_SERVER_CREDITS"
    exit 1
fi
