#!/bin/sh
# Every environment variable the code reads is documented in docs/ENVIRONMENT.md.
# Usage: test_env_doc.sh SOURCE_ROOT
root=$1
doc="$root/docs/ENVIRONMENT.md"
# Names passed to getenv() or to the env_*() parsers of armci/config.c and softib's knobs.c.
names=$(grep -rohE '(getenv|env_[a-z0-9]+)\("(ARMCI|SOFTIB)_[A-Z0-9_]+"' "$root/armci" "$root/softib/src" |
    grep -oE '(ARMCI|SOFTIB)_[A-Z0-9_]+' | sort -u)
missing=""
for n in $names; do
    grep -q "\`$n\`" "$doc" || missing="$missing $n"
done
if [ -n "$missing" ]; then
    echo "not documented in docs/ENVIRONMENT.md:$missing"
    exit 1
fi
echo "PASS: all $(echo "$names" | wc -w) variables documented"
