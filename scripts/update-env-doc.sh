#!/bin/sh
# Rewrites the generated runtime table of docs/ENVIRONMENT.md from the
# configuration table compiled into armci-info: update-env-doc.sh [BUILD_DIR]
set -e
cd "$(dirname "$0")/.."
info=${1:-build}/tools/armci-info
doc=docs/ENVIRONMENT.md
tmp=$(mktemp)
{
    sed -n '1,/^<!-- BEGIN generated/p' "$doc"
    "$info" --markdown
    sed -n '/^<!-- END generated/,$p' "$doc"
} >"$tmp"
mv "$tmp" "$doc"
