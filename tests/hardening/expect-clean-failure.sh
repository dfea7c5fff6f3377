#!/bin/sh
# expect-clean-failure.sh TEXT COMMAND [ARGS...]
# Like expect-failure.sh, and then nothing of the job may be left in /dev/shm.
# The job must run with ARMCI_VERBOSE=1 so that it logs its job id.
text=$1
shift
out=$("$@" 2>&1)
status=$?
job=$(printf '%s\n' "$out" | sed -n 's/.*job id \([0-9a-f]*\) .*/\1/p' | head -1)
if [ $status -eq 0 ] || ! printf '%s' "$out" | grep -qF -- "$text"; then
    echo "expected a failure mentioning: $text"
    echo "got exit status $status and:"
    printf '%s\n' "$out"
    exit 1
fi
if [ -z "$job" ]; then
    echo "the job did not log its id (ARMCI_VERBOSE=1 missing?)"
    printf '%s\n' "$out"
    exit 1
fi
left=$(ls /dev/shm 2>/dev/null | grep -F "armci-$job-")
if [ -n "$left" ]; then
    echo "failed as expected, but left behind in /dev/shm: $left"
    exit 1
fi
echo "failed as expected ($(printf '%s' "$out" | grep -F -- "$text" | head -1)); /dev/shm has nothing of job $job"
