#!/bin/sh
# The runtime's concurrent code under ThreadSanitizer: builds build-tsan/
# (-Db_sanitize=thread; or $TSAN_BUILD_DIR) and runs every test of suite
# `threads` (every call from several threads at once: puts, gets, accumulates,
# mutexes, fences, connection set-up, Malloc/Free, over RC and the hybrid UD path)
# and, of the suites `internode` and `odcm`, the cases below: each drives the
# data-server thread beside the application thread or the connection manager in a
# way the threads suite does not (deferred completions, chains, Rmw, locks,
# ordering, first contact, bad requests, overlap set-up, eviction under UD loss, pools
# trimmed by the server thread while the application fences, directory entries learned by
# both threads of a master at once).
# Their other cases repeat these paths at other layouts: under the sanitizer's
# 3-10x slowdown the whole three suites took 980 s of a 35-minute test command.
# Open MPI's own reports are suppressed (tests/tsan.supp); ours never are.
# Extra arguments go to `meson test` instead (e.g. --suite internode: all of it).
set -e
cd "$(dirname "$0")/.."
build=${TSAN_BUILD_DIR:-build-tsan}
[ -f "$build/build.ninja" ] || meson setup "$build" -Db_sanitize=thread --buildtype=debugoptimized \
    -Dbench=false >/dev/null
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp exitcode=66 ${TSAN_OPTIONS:-}"
# The node-loss cases' own hang bound stretches like the timeouts (the sanitizer's slowdown),
# for a run of the whole internode suite.
export NODE_LOSS_BOUND_SCALE=3
if [ $# -eq 0 ]; then
    # Builds only what these tests run (the whole tree took minutes of the stage); set -e
    # ends the stage if a name is unknown.
    names=$(scripts/select-tests.py "$build" --suite threads \
        rma-4x2 rma-4x1-deferred chain-2x1-deferred chain-4x2 rmw-mixed-4x2 lock-fifo-4x1 \
        ordering-4x2 verbs-traffic-4x2 first-contact-burst-3x1 server-rejects-bad-requests \
        rma-6x2-ondemand-overlap cap2-6x1-udloss ring-4x1 alltoall-6x1 pool-trim-4x2 \
        directory-9x1-ud directory-10x2)
    # shellcheck disable=SC2086 # one word a test name
    set -- $names
else
    ninja -C "$build" >/dev/null
fi
exec meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 2 --timeout-multiplier 3 "$@"
