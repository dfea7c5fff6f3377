#!/bin/sh
# run-breaks.sh RUNS RUN_MPI NP PROGRAM [ARGS...]: runs PROGRAM RUNS times (SOFTIB_SEED 1..RUNS)
# under the connection breaks the environment asks for (SOFTIB_RC_BREAK, ARMCI_TEST_HOOKS).
# Passes when every run ends well (exit 0, no check=FAIL: the programs check every byte and
# counter themselves), the runs broke connections between them, and every break was
# recovered. Prints the counts: runs, breaks, recoveries, requests replayed, slowest recovery.
runs=$1 run_mpi=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
breaks=0 recovered=0 replayed=0 slowest=0
for seed in $(seq 1 "$runs"); do
    SOFTIB_SEED=$seed "$run_mpi" "$@" >"$out" 2>&1
    status=$?
    if [ $status -ne 0 ] || grep -q "check=FAIL" "$out"; then
        echo "run $seed of $runs failed (exit status $status):"
        grep -v "^ARMCI (rank" "$out" | tail -40
        exit 1
    fi
    b=$(grep -c "connecting anew" "$out")
    r=$(grep -c "recovered in" "$out")
    breaks=$((breaks + b))
    recovered=$((recovered + r))
    replayed=$((replayed + $(grep -o "[0-9]* requests replayed" "$out" | awk '{s += $1} END {print s + 0}')))
    slowest=$(grep -o "recovered in [0-9.]* s" "$out" | awk -v m="$slowest" '$3 > m {m = $3} END {print m}')
done
echo "$runs of $runs runs right: $breaks breaks, $recovered recovered, $replayed requests replayed, slowest recovery ${slowest} s"
if [ "$breaks" -eq 0 ]; then
    echo "no connection broke: the case tests nothing"
    exit 1
fi
if [ "$recovered" -ne "$breaks" ]; then
    echo "$breaks breaks but $recovered recoveries"
    exit 1
fi
