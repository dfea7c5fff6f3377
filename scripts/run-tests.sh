#!/bin/sh
# Quick start, command 2 (and what CI runs): installs what is missing,
# builds, and runs the whole test suite, then the concurrent code under
# ThreadSanitizer (scripts/run-tsan.sh) and the MPICH build
# (scripts/run-mpich.sh). Extra arguments go to `meson test` alone
# (e.g. --suite odcm) and skip the ThreadSanitizer and MPICH runs.
set -e
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${BUILD_DIR:-build}
if [ $# -gt 0 ]; then
    exec meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
fi
meson test -C "$build" --print-errorlogs --num-processes 2
scripts/run-tsan.sh
exec scripts/run-mpich.sh
