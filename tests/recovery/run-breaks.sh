#!/bin/sh
# run-breaks.sh RUNS RUN_MPI NP PROGRAM [ARGS...]: runs PROGRAM RUNS times (SOFTIB_SEED 1..RUNS)
# under the connection breaks the environment asks for (SOFTIB_RC_BREAK, ARMCI_TEST_HOOKS).
# Passes when every run ends well (exit 0, no check=FAIL: the programs check every byte and
# counter themselves), the runs broke connections between them (unless RUN_BREAKS_NONE_OK=1:
# a case whose faults are the UD path's datagrams lost, duplicated and reordered), and every
# break was recovered. Prints the counts: runs, breaks, recoveries, requests replayed, slowest recovery.
#
# The counts are the job's totals from the connection report, written to a file of its own
# (ARMCI_CONN_REPORT=file:...). Counting the ranks' warning lines in the launcher's output
# undercounts: Open MPI forwards each rank's stderr in chunks, so a line of one rank can be
# cut by another rank's output (4 ranks writing 3000 lines each: 11989-11995 whole lines).
runs=$1 run_mpi=$2
shift 2
out=$(mktemp)
report=$(mktemp)
trap 'rm -f "$out" "$report"' EXIT
field() { "$(dirname "$0")/../conn-report-field.sh" "$1" "$report"; }
breaks=0 recovered=0 replayed=0 slowest=0
# RUN_BREAKS_REQUIRE="FIELD...": report fields whose sum over the runs must not be 0 (the case
# must have reached the path it is about: requests served on a broken end, ...).
required_sums=""
for seed in $(seq 1 "$runs"); do
    : >"$report"
    SOFTIB_SEED=$seed ARMCI_CONN_REPORT=file:$report "$run_mpi" "$@" >"$out" 2>&1
    status=$?
    if [ $status -ne 0 ] || grep -q "check=FAIL" "$out"; then
        echo "run $seed of $runs failed (exit status $status):"
        grep -v "^ARMCI (rank" "$out" | tail -40
        exit 1
    fi
    b=$(field breaks) r=$(field recovered) n=$(field replayed) s=$(field recovery_s_max)
    if [ -z "$b" ] || [ -z "$r" ] || [ -z "$n" ] || [ -z "$s" ]; then
        echo "run $seed of $runs wrote no connection report with recovery counts:"
        cat "$report"
        exit 1
    fi
    # The warnings are there for people; a run that counted breaks printed some.
    if [ "$b" -gt 0 ] && ! grep -q "connecting anew" "$out"; then
        echo "run $seed of $runs: the report counts $b breaks, but no rank warned of one"
        exit 1
    fi
    for f in ${RUN_BREAKS_REQUIRE:-}; do
        required_sums="$required_sums $f=$(field "$f")"
    done
    breaks=$((breaks + b))
    recovered=$((recovered + r))
    replayed=$((replayed + n))
    slowest=$(echo "$s $slowest" | awk '{print ($1 > $2) ? $1 : $2}')
done
echo "$runs of $runs runs right: $breaks breaks, $recovered recovered, $replayed requests replayed, slowest recovery ${slowest} s"
for f in ${RUN_BREAKS_REQUIRE:-}; do
    sum=$(echo "$required_sums" | tr ' ' '\n' | awk -F= -v f="$f" '$1 == f { s += $2 } END { print s + 0 }')
    echo "  $f: $sum over the runs"
    if [ "$sum" -eq 0 ]; then
        echo "$f is 0 in every run: the case never reached what it tests"
        exit 1
    fi
done
if [ "$breaks" -eq 0 ] && [ "${RUN_BREAKS_NONE_OK:-0}" != 1 ]; then
    echo "no connection broke: the case tests nothing"
    exit 1
fi
if [ "$recovered" -ne "$breaks" ]; then
    echo "$breaks breaks but $recovered recoveries"
    exit 1
fi
