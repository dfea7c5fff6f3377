#!/bin/sh
# No shared-memory object of a job is left in /dev/shm after it ends: normally,
# through ARMCI_Error, or killed by SIGKILL in the middle of its work.
# Objects are unlinked as soon as every process has mapped them, so even a
# killed job leaves nothing. The job id (logged with ARMCI_VERBOSE=1) names
# them, so other jobs running meanwhile do not disturb the check.
# Usage: test_shm_cleanup.sh RUN_MPI_SH TEST_PROGRAM
run_mpi=$1
prog=$2
fail=0
check() { # LABEL LOGFILE
    id=$(grep -o 'job id [0-9a-f]*' "$2" | head -1 | cut -d' ' -f3)
    if [ -z "$id" ]; then
        echo "FAIL $1: no job id in the log"; fail=1; return
    fi
    left=$(ls /dev/shm 2>/dev/null | grep -- "armci-$id-" || true)
    if [ -n "$left" ]; then
        echo "FAIL $1: left in /dev/shm: $left"; fail=1
    else
        echo "ok   $1 (job $id)"
    fi
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

ARMCI_VERBOSE=1 "$run_mpi" 2 "$prog" normal >"$log" 2>&1
check "normal exit" "$log"
ARMCI_VERBOSE=1 "$run_mpi" 2 "$prog" error >"$log" 2>&1
check "ARMCI_Error" "$log"
ARMCI_VERBOSE=1 "$run_mpi" 2 "$prog" kill >"$log" 2>&1
check "SIGKILL" "$log"
exit $fail
