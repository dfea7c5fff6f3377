#!/bin/sh
# The soak for longer: tests/soak/run-long.sh MINUTES [BUILD_DIR] [PROCESSES] [THREADS]
# Same setting as the suite's soak (6 processes on 3 virtual nodes, a cap of one connection,
# 10 % UD loss and reordering, deferred writes). Prints the soak's figures and the connection
# report's cap fields (connections closed and reopened); exits non-zero on any mismatch.
set -u
minutes=${1:?usage: run-long.sh MINUTES [BUILD_DIR] [PROCESSES] [THREADS]}
here=$(cd "$(dirname "$0")" && pwd)
build=${2:-$here/../../build}
np=${3:-6}
threads=${4:-3}
export ARMCI_SOFTIB_LIBRARY=${ARMCI_SOFTIB_LIBRARY:-$build/softib/libsoftib.so.0}
export ARMCI_NODE_SIZE=${ARMCI_NODE_SIZE:-2} ARMCI_MAX_CONNECTIONS=${ARMCI_MAX_CONNECTIONS:-1}
export SOFTIB_UD_LOSS=${SOFTIB_UD_LOSS:-0.1} SOFTIB_UD_REORDER=${SOFTIB_UD_REORDER:-0.1}
export SOFTIB_DEFERRED=${SOFTIB_DEFERRED:-1} ARMCI_CONN_REPORT=1
out=$(mktemp "${TMPDIR:-/tmp}/soak.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT INT TERM
start=$(date +%s)
"$here/../run-mpi.sh" "$np" "$build/tests/soak/soak" $((minutes * 60)) "$threads" >"$out" 2>&1
status=$?
grep -E '^soak|MISMATCH|^ARMCI_CONN_REPORT' "$out" | sed 's/^ARMCI_CONN_REPORT.* \(cap=[^ ]*\) .*\(closed=[^ ]*\) \(reopened=[^ ]*\).*/connections: \1 \2 \3/'
echo "soak: exit status $status after $(($(date +%s) - start)) s wall time"
[ "$status" -eq 0 ] || tail -n 30 "$out"
exit "$status"
