#!/usr/bin/env python3
"""The time budget of a meson test run: every test at most half of its limit.

    scripts/time-budget.py BUILD_DIR [--multiplier M] [--share 0.5] [--top 12] [--limits FILE]

Reads the durations of the last `meson test` in BUILD_DIR (meson-logs/testlog.json) and the
limits of the tests (`meson introspect --tests`, times M, the run's --timeout-multiplier),
prints the slowest tests as duration / limit, and exits 1 naming every test that took more
than SHARE of its limit (a test living near its limit fails on the next busy machine: this
shows the creep a run before the timeout would). A test that timed out is over by definition.
The VM cases of tests/multihost/cases.sh apply the same rule to their own limits.
"""
import argparse
import json
import os
import subprocess
import sys


def pretty_name(test, several_suites):
    """The name `meson test` logs a test under (mtest.py's get_pretty_suite)."""
    suites = test.get("suite") or []
    if not several_suites or not suites:
        return test["name"]
    project = suites[0].split(":", 1)[0]
    parts = [s.split(":", 1)[1] if ":" in s else "" for s in suites]
    joined = "+".join(parts)
    return f"{project}{':' + joined if joined else ''} / {test['name']}"


def limits(build, multiplier, limits_file=None):
    """Test name -> limit in seconds, from `meson introspect --tests` (or a file holding what
    it prints: tests/core/test_time_budget.sh)."""
    if limits_file:
        with open(limits_file, encoding="utf-8") as f:
            tests = json.load(f)
    else:
        out = subprocess.run(["meson", "introspect", "--tests", build], check=True,
                             capture_output=True, text=True).stdout
        tests = json.loads(out)
    several = len({s for t in tests for s in t.get("suite") or []}) > 1
    table = {}
    for t in tests:
        timeout = t.get("timeout") or 30
        table[pretty_name(t, several)] = timeout * multiplier if timeout > 0 else 0
        table.setdefault(t["name"], table[pretty_name(t, several)])
    return table


def durations(build):
    path = os.path.join(build, "meson-logs", "testlog.json")
    runs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            runs.append((r["name"], float(r.get("duration") or 0), r.get("result", "")))
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--multiplier", type=float, default=1.0)
    ap.add_argument("--share", type=float, default=0.5)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--limits", help="the tests' limits as `meson introspect --tests` prints them")
    a = ap.parse_args()

    table = limits(a.build, a.multiplier, a.limits)
    runs = durations(a.build)
    if not runs:
        print(f"time-budget: no test ran in {a.build} (meson-logs/testlog.json is empty)")
        return 1
    rows = []
    for name, dur, result in runs:
        limit = table.get(name) or table.get(name.rsplit(" / ", 1)[-1]) or 0
        share = dur / limit if limit else 0.0
        if result == "TIMEOUT":
            share = max(share, 1.0)
        rows.append((share, dur, limit, name, result))
    rows.sort(reverse=True)
    total = sum(r[1] for r in rows)
    print(f"time budget: {len(rows)} tests, {total:.0f} s of test time; the slowest as "
          f"duration / limit (a test over {a.share:.0%} of its limit fails the run):")
    for share, dur, limit, name, result in rows[:a.top]:
        print(f"  {dur:7.1f} s / {limit:5.0f} s  {share:4.0%}  {name}"
              f"{'  (' + result + ')' if result not in ('OK', 'SKIP', 'EXPECTEDFAIL') else ''}")
    over = [r for r in rows if r[0] > a.share]
    for share, dur, limit, name, _ in over:
        print(f"time-budget: FAIL {name}: {dur:.1f} s of its {limit:.0f} s limit ({share:.0%} > "
              f"{a.share:.0%}): make it cheaper or give it a limit it keeps to with room to spare")
    if over:
        return 1
    print(f"time budget: every test within {a.share:.0%} of its limit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
