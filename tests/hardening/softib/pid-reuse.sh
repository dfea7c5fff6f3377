#!/bin/sh
# pid-reuse.sh PROGRAM: runs PROGRAM as pid 1 of a new pid namespace (with its
# own /proc), where pids are small and the test can have a dead process's pid
# handed to a new one. Skipped (77) where no pid namespace may be made.
prog=$1
if [ "$(id -u)" = 0 ]; then
    set -- unshare --pid --fork --mount-proc
else
    set -- unshare --user --map-root-user --pid --fork --mount-proc
fi
if ! "$@" true 2>/dev/null; then
    echo "skip: '$*' is not permitted here"
    exit 77
fi
exec "$@" "$prog"
