#!/bin/sh
# Quick start, command 2 (and what CI runs): installs what is missing,
# builds, and runs the whole test suite. Extra arguments go to `meson test`
# (e.g. --suite odcm).
set -e
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${BUILD_DIR:-build}
exec meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
