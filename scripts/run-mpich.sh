#!/bin/sh
# The runtime built for MPICH (-Dmpi=mpich) into build-mpich/ (or
# $MPICH_BUILD_DIR), run under MPICH's mpiexec: every test of the suites
# `core` (the API, arguments, collectives, groups, messages), `apps` and
# `install` (a fresh prefix), and, of `internode` and `odcm`, the cases below,
# one for each way the runtime uses MPI beside the fabric (start-up and the
# out-of-band exchange, the on-demand and static set-up, the RDMA barrier, locks,
# groups' segments, message passing over MPI; the node-loss cases are Open MPI's only).
# Their other cases change what happens on the fabric, which MPI does not touch; all of
# internode and odcm took half of this stage's 7 minutes.
# Extra arguments go to `meson test` instead (e.g. --suite internode: all of it).
set -e
cd "$(dirname "$0")/.."
build=${MPICH_BUILD_DIR:-build-mpich}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dmpi=mpich -Dbench=false >/dev/null
if [ $# -eq 0 ]; then
    # Builds only what these tests run; set -e ends the stage if a name is unknown.
    names=$(scripts/select-tests.py "$build" --suite core --suite apps --suite install \
        rma-4x2 rma-4x1-static msg-4x2 msg-4x1 lock-fifo-4x1 chain-4x2 ordering-4x2 \
        rma-6x2-ondemand-overlap rma-6x2-static-overlap alltoall-6x1)
    # shellcheck disable=SC2086 # one word a test name
    set -- $names
else
    ninja -C "$build" >/dev/null
fi
exec meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 2 "$@"
