#!/bin/sh
# The runtime's concurrent code under ThreadSanitizer: builds build-tsan/
# (-Db_sanitize=thread; or $TSAN_BUILD_DIR) and runs the suites whose
# processes have several threads inside libarmci at once: `threads` (every
# call from several threads), and `internode` and `odcm` (the data-server
# thread beside the application thread, the connection manager). Open MPI's
# own reports are suppressed (tests/tsan.supp); ours never are. The outage cases whose
# timing the sanitizer's slowdown defeats (suite outage-timing) are left out, and so is the
# 32-process memory-model case (suite memory-model: a model no thread changes, 75 s there).
# Extra arguments go to `meson test` (e.g. --suite threads).
set -e
cd "$(dirname "$0")/.."
build=${TSAN_BUILD_DIR:-build-tsan}
[ -f "$build/build.ninja" ] || meson setup "$build" -Db_sanitize=thread --buildtype=debugoptimized \
    -Dbench=false >/dev/null
ninja -C "$build" >/dev/null
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp exitcode=66 ${TSAN_OPTIONS:-}"
# The node-loss cases' own hang bound stretches like the timeouts (the sanitizer's slowdown).
export NODE_LOSS_BOUND_SCALE=3
[ $# -gt 0 ] || set -- --suite threads --suite internode --suite odcm --no-suite outage-timing \
    --no-suite memory-model
exec meson test -C "$build" --print-errorlogs --num-processes 2 --timeout-multiplier 3 "$@"
