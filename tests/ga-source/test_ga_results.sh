#!/bin/bash
# The verdict of GA's `make check` (scripts/ga-results.sh) on a fake GA build
# directory, without building GA: a test skipped because the time budget was
# spent must fail the run, a test that skips itself must not, a failure must.
# The budget skip is the real one: scripts/ga-mpiexec.sh with a deadline that
# has passed writes the test's log.
#   test_ga_results.sh SCRIPTS_DIR
set -eu -o pipefail
scripts=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/ga-results.XXXXXX")
trap 'rm -rf "$dir"' EXIT
build=$dir/build
mkdir -p "$build/global/testing"
echo "EXEEXT = .x" > "$build/Makefile"
echo "# TOTAL: 3" > "$build/test-suite.log"
: > "$dir/timings"

# A test: NAME RESULT LOG-TEXT
add() {
    echo ":test-result: $2" > "$build/global/testing/$1.trs"
    printf '%s\n' "$3" > "$build/global/testing/$1.log"
    echo "global/testing/$1.x 1 0 4" >> "$dir/timings"
}
verdict() {
    "$scripts/ga-results.sh" "$build" odcm "$dir/timings" > "$dir/out" 2>&1
}
fail() {
    echo "FAIL: $*"
    sed 's/^/    /' "$dir/out"
    exit 1
}
odcm_line="ARMCI-ODCM 1.0: libarmci code in /x/libarmci.so.0"

add test PASS "$odcm_line"
add ga_shape PASS "$odcm_line"
add selfskip SKIP "this test skips itself (exit 77)"
verdict || fail "passes and a test's own skip: expected success"
grep -q "2 passed, 0 failed, 1 skipped" "$dir/out" || fail "summary of a good run"

# ga-mpiexec.sh with the budget spent (the deadline is now): skips without running.
set +e
GA_DEADLINE=$(date +%s) "$scripts/ga-mpiexec.sh" --ga-test ./global/testing/late.x \
    > "$dir/late.log" 2>&1
status=$?
set -e
[ "$status" = 77 ] || { echo "FAIL: ga-mpiexec.sh past the deadline exited $status, not 77"; exit 1; }
add late SKIP "$(cat "$dir/late.log")"
if verdict; then
    fail "a test skipped for the time budget: expected failure"
fi
grep -q "not run, the time budget .*late.x" "$dir/out" || fail "the unrun test is not named"

rm "$build/global/testing/late.trs"
add broken FAIL "$odcm_line"
if verdict; then
    fail "a failed test: expected failure"
fi
echo "PASS ga-results.sh: budget skips and failures fail the run, a test's own skip does not"
