#!/bin/sh
# Every ARMCI_*, armci_* and PARMCI_* symbol Global Arrays (libga-openmpi.a,
# Debian libglobalarrays-dev) leaves undefined must be defined by libarmci.so.
# Usage: test_ga_symbols.sh LIBARMCI_SO [LIBGA_A]
lib=$1
ga=${2:-/usr/lib/x86_64-linux-gnu/libga-openmpi.a}
if [ ! -f "$ga" ]; then
    echo "SKIP: $ga not found (install libglobalarrays-dev)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -u "$ga" 2>/dev/null | awk '{print $2}' | grep -E '^(P?ARMCI_|armci_|parmci_)' | sort -u >"$tmp/undef"
nm --defined-only "$ga" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/ga_defs"
comm -23 "$tmp/undef" "$tmp/ga_defs" >"$tmp/needed"
nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$tmp/ours"
missing=$(comm -23 "$tmp/needed" "$tmp/ours")
if [ -n "$missing" ]; then
    echo "libarmci.so lacks symbols Global Arrays needs:"
    echo "$missing"
    exit 1
fi
echo "PASS: all $(wc -l <"$tmp/needed") ARMCI symbols Global Arrays needs are defined"
