#!/bin/sh
# The time budget's verdict (scripts/time-budget.py) on a made-up run, in a second: tests at
# 40 % and 50 % of their limits pass; one at 55 % fails the run naming it; one that timed out
# fails; a --timeout-multiplier (the ThreadSanitizer stage's 3) scales the limits; a run
# with no test fails; the multi-host VM cases' rule (tests/multihost/over-budget.sh) alike.
# Usage: test_time_budget.sh SCRIPTS_DIR MULTIHOST_DIR
budget=$1/time-budget.py
. "$2/over-budget.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/meson-logs"
cat >"$dir/limits.json" <<'JSON'
[{"name": "a", "suite": ["p:s1"], "timeout": 100},
 {"name": "b", "suite": ["p:s1"], "timeout": 100},
 {"name": "c", "suite": ["p:s2"], "timeout": 200}]
JSON
run() { # testlog lines...
    printf '%s\n' "$@" >"$dir/meson-logs/testlog.json"
}
fails=0
expect() { # WANT(0|1) WHAT ARGS...
    want=$1 what=$2
    shift 2
    out=$("$budget" "$dir" --limits "$dir/limits.json" "$@" 2>&1)
    got=$?
    [ "$got" -ne 0 ] && got=1
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what (exit $got, wanted $want):"; echo "$out" | sed 's/^/    /'
        fails=$((fails + 1))
    else
        echo "ok   $what"
    fi
    last=$out
}
run '{"name": "p:s1 / a", "duration": 40, "result": "OK"}' \
    '{"name": "p:s1 / b", "duration": 50, "result": "OK"}' \
    '{"name": "p:s2 / c", "duration": 100, "result": "OK"}'
expect 0 "40 %, 50 % and 50 % of the limits pass"
run '{"name": "p:s1 / a", "duration": 40, "result": "OK"}' \
    '{"name": "p:s2 / c", "duration": 110, "result": "OK"}'
expect 1 "110 s of a 200 s limit (55 %) fails"
echo "$last" | grep -q "FAIL p:s2 / c: 110.0 s of its 200 s limit (55%" ||
    { echo "FAIL: the verdict does not name the test and its figures"; fails=$((fails + 1)); }
expect 0 "the same with the limits tripled (--multiplier 3)" --multiplier 3
run '{"name": "p:s1 / a", "duration": 10, "result": "TIMEOUT"}'
expect 1 "a test that timed out fails"
run ''
expect 1 "a run with no test fails"
# The VM cases: 150 s of 300 passes, 151 s fails naming the figures (a limit lowered).
[ -z "$(over_budget 150 300)" ] && echo "ok   a VM case at 50 % of its limit passes" ||
    { echo "FAIL: a VM case at 50 % failed"; fails=$((fails + 1)); }
why=$(over_budget 151 300)
case $why in *"took 151 s, over 50 % of its 300 s limit"*) echo "ok   a VM case at 50.3 % fails" ;;
*) echo "FAIL: a VM case at 50.3 % gave '$why'"; fails=$((fails + 1)) ;; esac
echo "$((7 - fails)) passed, $fails failed"
[ $fails -eq 0 ]
