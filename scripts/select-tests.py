#!/usr/bin/env python3
"""select-tests.py BUILD_DIR [--suite SUITE]... [NAME]...: builds what the chosen tests of
BUILD_DIR need and prints their names, one a line, for `meson test --no-rebuild NAME...`
(Meson takes suites or names, and with both runs only what matches both). A stage that runs
a few tests then builds only those, not the whole tree:

    names=$(scripts/select-tests.py build --suite threads rma-4x2)
    meson test -C build --no-rebuild $names

The tests are every test of each SUITE and each NAME. A test needs what Meson lists as its
dependencies (its executable, the programs among its arguments, `depends :`) and every
target whose file its command line or environment names (softib, loaded by path from
ARMCI_SOFTIB_LIBRARY; a tool a script runs). A NAME that is no test of the build is an
error: a renamed test would otherwise be left out in silence.
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", what, build], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def targets_needed(build, tests):
    files = {}  # a target's file (absolute) -> the target's paths for ninja
    ids = {}
    for target in introspect(build, "--targets"):
        paths = [os.path.relpath(f, build) for f in target["filename"]]
        ids[target["id"]] = paths
        for f in target["filename"]:
            files[f] = paths
    wanted = set()
    for t in tests:
        for dep in t["depends"]:
            wanted.update(ids.get(dep, []))
        for word in t["cmd"] + list(t["env"].values()):
            for part in word.split(os.pathsep):
                path = part if os.path.isabs(part) else os.path.join(build, part)
                # A versioned library (libsoftib.so.0.1.0) is named by its links too.
                for f, paths in files.items():
                    if path == f or (f.startswith(path + ".") and ".so" in f):
                        wanted.update(paths)
    return sorted(wanted)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__.strip().splitlines()[0])
    build = os.path.abspath(args.pop(0))
    suites, names = set(), set()
    while args:
        arg = args.pop(0)
        if arg == "--suite" and args:
            suites.add(args.pop(0))
        else:
            names.add(arg)
    # Regenerates the build files first if a meson.build changed (introspection reads them).
    subprocess.run(["ninja", "-C", build, "build.ninja"], check=True, stdout=subprocess.DEVNULL)
    everything = introspect(build, "--tests")
    unknown = names - {t["name"] for t in everything}
    if unknown:
        sys.exit("select-tests.py: no test named %s in %s" % (", ".join(sorted(unknown)), build))
    # Meson names a test's suites "project:suite".
    tests = [t for t in everything
             if t["name"] in names or suites & {s.split(":")[-1] for s in t["suite"]}]
    if not tests:
        sys.exit("select-tests.py: no test in suites %s of %s" % (sorted(suites), build))
    # meson test runs every test of a name it is given (core's abi and softib's abi): build
    # for all of them.
    chosen = {t["name"] for t in tests}
    tests = [t for t in everything if t["name"] in chosen]
    subprocess.run(["ninja", "-C", build] + targets_needed(build, tests), check=True,
                   stdout=subprocess.DEVNULL)
    print("\n".join(sorted({t["name"] for t in tests})))


if __name__ == "__main__":
    main()
