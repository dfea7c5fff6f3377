#!/bin/sh
# Follows one blocking 4 KiB put and one accumulate across two virtual nodes
# through the library, function by function, and prints each walk file by file
# with its number of moves between files on the sending side (docs/ARCHITECTURE.md's
# code map quotes it): calls into core/ and strided/, the utilities every
# layer uses, are listed but not counted as moves. Needs gdb; builds a debug tree of its own (-O0, so that
# the walk is the source's, not the inliner's).
#   scripts/walk-ops.sh [BUILD_DIR]    (default: build-walk)
set -e
cd "$(dirname "$0")/.."
scripts/check-programs.sh gdb ctags
src=$(pwd)
build=${1:-build-walk}
[ -d "$build" ] || meson setup "$build" --buildtype=debug -Dtests=false -Dbench=false >/dev/null
ninja -C "$build" >/dev/null
funcs=$(mktemp)
trap 'rm -f "$funcs"' EXIT
ctags -x --c-kinds=f $(find armci -name '*.c' | sort) | awk '{print $4, $1}' >"$funcs"
export WALK_SRC="$src" WALK_FUNCS="$funcs"
export ARMCI_SOFTIB_LIBRARY="$src/$build/softib/libsoftib.so.0" ARMCI_NODE_SIZE=1
export ARMCI_CONN_REPORT=0 SOFTIB_FABRIC=armci-walk-$$
# Rank 0 runs under the debugger; rank 1 is the target.
tests/run-mpi.sh 2 sh -c 'if [ "${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" = 0 ]; then
    exec gdb -q -batch -x "$WALK_SRC/scripts/walk-ops.py" --args "$0"
else exec "$0"; fi' "$src/$build/tools/walk-ops" 2>&1 |
    grep -E '^(==|   |WALK,|walk-ops:)'
