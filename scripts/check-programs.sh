#!/bin/sh
# check-programs.sh PROG...: for each PROG not found (on PATH, or in /usr/sbin
# or /sbin), says which Debian package provides it (the row of
# scripts/deps.txt) and that scripts/install-deps.sh installs it; exits 1 if
# any is missing. tests/core/test_deps.py reads these calls too: every PROG
# needs its row in scripts/deps.txt.
table=$(dirname "$0")/deps.txt
status=0
for p in "$@"; do
    if command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || [ -x "/sbin/$p" ]; then
        continue
    fi
    pkg=$(awk -v p="$p" '$1 == p { print $2; exit }' "$table")
    echo "$p is missing: it comes from the package ${pkg:-(none: add a row to scripts/deps.txt)}, which scripts/install-deps.sh installs" >&2
    status=1
done
exit $status
