#!/usr/bin/env python3
"""test_schedule.py BUILD_DIR: the main stage's order keeps both cores busy.

Meson lets every running test end before it starts a test that runs alone (is_parallel
false). Such a test sorted before parallel ones (by priority, then definition order) holds
the whole suite behind the longest test running at that moment: GA's make check, started
first, ran 5 minutes with nothing beside it while softib's rc-default-fabric waited in
line. Every test that runs alone must therefore come after every parallel test: a lower
priority than all of theirs.
"""
import json
import subprocess
import sys


def main():
    build = sys.argv[1]
    tests = json.loads(subprocess.run(["meson", "introspect", "--tests", build], check=True,
                                      capture_output=True, text=True).stdout)
    parallel = [t for t in tests if t["is_parallel"]]
    alone = [t for t in tests if not t["is_parallel"]]
    lowest = min(t["priority"] for t in parallel)
    bad = [t for t in alone if t["priority"] >= lowest]
    for t in bad:
        print("FAIL: %s runs alone (is_parallel false) at priority %d, not below every parallel "
              "test's (lowest %d): the suite waits for all running tests before it"
              % (t["name"], t["priority"], lowest))
    if not alone or not parallel:
        print("FAIL: expected both tests that run alone and parallel ones (%d, %d)"
              % (len(alone), len(parallel)))
        return 1
    if bad:
        return 1
    print("PASS: %d tests run alone, all after the %d parallel ones (priorities %s < %d)"
          % (len(alone), len(parallel), sorted({t["priority"] for t in alone}), lowest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
