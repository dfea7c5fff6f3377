#!/bin/sh
# Configures (once) and builds into build/ (or $BUILD_DIR).
set -e
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release
ninja -C "$build"
