#!/bin/sh
# Writes docs/man/armci.7 (or the file given as $2) from the configuration
# table compiled into armci-info: the hand-written head of the page
# (docs/man/armci.7.head) and one entry per variable. The core test man-page
# checks that the page in the tree is up to date.
#   update-man.sh [BUILD_DIR] [OUTPUT]
set -e
cd "$(dirname "$0")/.."
info=${1:-build}/tools/armci-info
out=${2:-docs/man/armci.7}
tmp=$(mktemp)
{
    cat docs/man/armci.7.head
    echo '.SH RUNTIME VARIABLES'
    echo 'Generated from the configuration table (armci/core/config.c); the value'
    printf '%s\n' 'each has in the current environment: \fBarmci-info -c\fR.'
    # | `NAME` | `default` or (empty) | yes/no | meaning |
    "$info" --markdown | sed -n 's/^| `\([A-Z0-9_]*\)` | \(.*\) | \(yes\|no\) | \(.*\) |$/\1\t\2\t\3\t\4/p' |
        while IFS="$(printf '\t')" read -r name dflt match help; do
            dflt=$(printf '%s' "$dflt" | tr -d '`')
            echo '.TP'
            # (dash's echo would read \f as a form feed: printf only)
            if [ "$match" = yes ]; then
                printf '.B %s\n(default \\fI%s\\fR; must be equal on every rank)\n' "$name" "$dflt"
            else
                printf '.B %s\n(default \\fI%s\\fR)\n' "$name" "$dflt"
            fi
            # a line starting with . or ' would be a troff request
            printf '%s\n' "$help" | sed "s/\\\\/\\\\e/g; s/^\\([.']\\)/\\\\\\&\\1/"
        done
    cat docs/man/armci.7.tail
} >"$tmp"
mv "$tmp" "$out"
