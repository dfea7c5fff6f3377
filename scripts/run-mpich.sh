#!/bin/sh
# The runtime built for MPICH (-Dmpi=mpich) into build-mpich/ (or
# $MPICH_BUILD_DIR), and its multi-process suites run under MPICH's
# mpiexec: `core`, `internode`, `odcm`, the applications (`apps`) and an
# install into a fresh prefix (`install`).
# The other suites are MPI-neutral or need Debian's Open MPI builds of GA
# and ARMCI-MPI; seg-memory-grows-with-nodes (suite memory-model, 32
# processes, 70-80 s under MPICH here) checks a memory model MPI does not
# change and is left out to keep the stage near 7 minutes on 2 cores.
# Extra arguments go to `meson test` (e.g. --suite core).
set -e
cd "$(dirname "$0")/.."
build=${MPICH_BUILD_DIR:-build-mpich}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dmpi=mpich -Dbench=false >/dev/null
ninja -C "$build" >/dev/null
[ $# -gt 0 ] || set -- --suite core --suite internode --suite odcm --suite apps --suite install \
    --no-suite memory-model
exec meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
