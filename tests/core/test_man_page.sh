#!/bin/sh
# docs/man/armci.7 is up to date with the configuration table compiled into
# armci-info (regenerate: scripts/update-man.sh).
# Usage: test_man_page.sh SOURCE_ROOT ARMCI_INFO
root=$1
info=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") # absolute: update-man.sh changes directory
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$root/scripts/update-man.sh" "$(dirname "$(dirname "$info")")" "$tmp" || exit 1
if ! diff -u "$root/docs/man/armci.7" "$tmp"; then
    echo "docs/man/armci.7 differs from the configuration table (run scripts/update-man.sh)"
    exit 1
fi
n=$(grep -c '^\.B ARMCI_' "$tmp")
[ "$n" -eq "$("$info" --markdown | grep -c '^| `ARMCI_')" ] || { echo "armci.7 has $n variables"; exit 1; }
echo "PASS: docs/man/armci.7 is up to date ($n variables)"
