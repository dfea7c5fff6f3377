#!/bin/sh
# Quick start, command 2 (and what CI runs): installs what the tests need,
# builds, and runs three stages, each to its end whatever the others did:
#   main   the whole meson test suite, then its time budget (scripts/time-budget.py:
#          every test within half of its limit);
#   tsan   the concurrent code under ThreadSanitizer (scripts/run-tsan.sh), and its budget;
#   mpich  the MPICH build (scripts/run-mpich.sh), and its budget.
# Each stage prints its verdict and time; the last line is the run's, and the exit
# status is non-zero when any stage failed. Extra arguments go to `meson test`
# alone (e.g. --suite odcm), with no budget and no other stage.
cd "$(dirname "$0")/.." || exit 2
scripts/install-deps.sh --tests || exit 2
scripts/build.sh --tests || exit 2
build=${BUILD_DIR:-build}
if [ $# -gt 0 ]; then
    exec meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
fi

# A process that dies of SIGSEGV (or SIGABRT...) leaves a core in its directory; each stage
# prints the backtraces of the ones its tests left (scripts/core-backtraces.sh).
# shellcheck disable=SC3045 # dash and bash both have ulimit -c
ulimit -c unlimited 2>/dev/null || true
failed=""
summary=""
# stage NAME BUDGET_DIR MULTIPLIER CMD...: runs CMD, then the time budget of the meson run
# it made in BUDGET_DIR; records the stage's verdict.
stage() {
    name=$1 dir=$2 mult=$3
    shift 3
    echo "==== stage $name: $*"
    start=$(date +%s)
    verdict=PASS
    "$@" || verdict=FAIL
    scripts/core-backtraces.sh "$dir"
    # The budget of the run this stage made (a stage that failed before testing has none).
    if [ -s "$dir/meson-logs/testlog.json" ] && [ "$(stat -c %Y "$dir/meson-logs/testlog.json")" -ge "$start" ]; then
        scripts/time-budget.py "$dir" --multiplier "$mult" || verdict="$verdict, over the time budget"
    else
        verdict="$verdict, no tests ran"
    fi
    case $verdict in PASS) ;; *) failed="$failed $name" ;; esac
    secs=$(($(date +%s) - start))
    echo "==== stage $name: $verdict ($secs s)"
    summary="$summary
  $name: $verdict ($secs s)"
}

t0=$(date +%s)
# GA's first build (its configure and make, about 2 minutes on an idle machine) before the
# suite instead of beside it: on a fresh machine, beside the suite and the VM cases' first
# boots, it took 432 + 929 s and left GA's make check short of its time budget. The
# ga-source test finds it in the cache (the same key: same sources, headers and library
# directory); a hit here costs seconds, a failure is the test's to report.
ga_src=../shared/ga
if [ -d "$ga_src" ]; then
    echo "==== GA's build, before the suite"
    case $build in /*) lib_dir=$build/armci ;; *) lib_dir=$PWD/$build/armci ;; esac
    ARMCI_LIB_DIR=$lib_dir GA_BUILD_ONLY=1 scripts/build-ga.sh "$ga_src" ||
        echo "run-tests: GA's build failed here; the ga-source test will say why"
fi
stage main "$build" 1 meson test -C "$build" --print-errorlogs --num-processes 3
stage tsan "${TSAN_BUILD_DIR:-build-tsan}" 3 scripts/run-tsan.sh
stage mpich "${MPICH_BUILD_DIR:-build-mpich}" 1 scripts/run-mpich.sh
echo "==== the stages:$summary"
echo "==== the whole test command: $(($(date +%s) - t0)) s"
nfailed=$(echo $failed | wc -w)
echo "stages: $((3 - nfailed)) passed, $nfailed failed"
[ -z "$failed" ] || { echo "run-tests: FAILED:$failed"; exit 1; }
