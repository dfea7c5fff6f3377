#!/usr/bin/env python3
"""test-targets.py BUILD_DIR NAME...: the build targets that the named tests of BUILD_DIR need,
one ninja target a line (paths relative to BUILD_DIR), so that a stage running a few tests
builds only those (`ninja -C BUILD_DIR $(scripts/test-targets.py BUILD_DIR NAME...)`).

A test needs what Meson lists as its dependencies (its executable, the programs among its
arguments, `depends :`) and every target whose file its command line or environment names
(softib, loaded by path from ARMCI_SOFTIB_LIBRARY; a tool a script runs). A name that is no
test of the build is an error: a renamed test would otherwise be left out in silence.
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", what, build], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[0])
    build, names = os.path.abspath(sys.argv[1]), set(sys.argv[2:])
    tests = [t for t in introspect(build, "--tests") if t["name"] in names]
    unknown = names - {t["name"] for t in tests}
    if unknown:
        sys.exit("test-targets.py: no test named %s in %s" % (", ".join(sorted(unknown)), build))
    files = {}  # a target's file (absolute) -> its path for ninja
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
    print("\n".join(sorted(wanted)))


if __name__ == "__main__":
    main()
