#!/bin/sh
# Configures (once) and builds into build/ (or $BUILD_DIR).
#   build.sh           configure if not configured yet, build
#   build.sh --tests   the same, but a build configured before the test packages were
#                      installed (the quick start's) is configured again, so that the
#                      parts Meson leaves out without them (GA's tests, Fortran) are built
set -e
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" --buildtype=release
elif [ "${1:-}" = --tests ] && [ ! -f "$build/.configured-with-test-packages" ]; then
    meson setup --reconfigure "$build"
fi
[ "${1:-}" = --tests ] && touch "$build/.configured-with-test-packages"
ninja -C "$build"
