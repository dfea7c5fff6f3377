#!/bin/sh
# docs/ENVIRONMENT.md agrees with the code: every variable the code reads
# is documented, the runtime's table is exactly what the configuration
# table compiled into armci-info prints (regenerate: scripts/update-env-doc.sh),
# and the ARMCI_TEST_HOOKS bits documented are the ones fault.h has.
# Usage: test_env_doc.sh SOURCE_ROOT ARMCI_INFO
root=$1
info=$2
doc="$root/docs/ENVIRONMENT.md"
status=0
# Names passed to getenv() in the code, to softib's knob parsers, or in the runtime's table.
names=$( (grep -rohE '(getenv|env_[a-z0-9]+)\("(ARMCI|SOFTIB)_[A-Z0-9_]+"' "$root/armci" "$root/softib/src"
    "$info" --markdown | grep -oE '^\| `ARMCI_[A-Z0-9_]+`') | grep -oE '(ARMCI|SOFTIB)_[A-Z0-9_]+' | sort -u)
missing=""
for n in $names; do
    grep -q "\`$n\`" "$doc" || missing="$missing $n"
done
if [ -n "$missing" ]; then
    echo "not documented in docs/ENVIRONMENT.md:$missing"
    status=1
fi
expected=$("$info" --markdown)
actual=$(sed -n '/^<!-- BEGIN generated/,/^<!-- END generated/p' "$doc" | sed '1d;$d')
if [ "$expected" != "$actual" ]; then
    echo "docs/ENVIRONMENT.md's runtime table differs from armci/config.c (run scripts/update-env-doc.sh):"
    printf '%s\n' "$expected" >/tmp/env-doc-expected.$$
    printf '%s\n' "$actual" | diff -u - /tmp/env-doc-expected.$$
    rm -f /tmp/env-doc-expected.$$
    status=1
fi
# The ARMCI_TEST_HOOKS bits the code has (fault.h) are exactly the ones the details list.
code_bits=$(grep -oE 'FAULT_[A-Z_]+ *= *1 << *[0-9]+' "$root/armci/core/fault.h" |
    sed 's/.*<< *//' | while read -r k; do echo $((1 << k)); done | sort -n | tr '\n' ' ')
doc_bits=$(grep -E '^- `ARMCI_TEST_HOOKS`:' "$doc" | grep -oE '`[0-9]+`' | tr -d '`' | sort -n |
    tr '\n' ' ')
if [ -z "$code_bits" ] || [ "$code_bits" != "$doc_bits" ]; then
    echo "ARMCI_TEST_HOOKS bits: armci/core/fault.h has [ $code_bits], docs/ENVIRONMENT.md lists [ $doc_bits]"
    status=1
fi
[ $status -eq 0 ] && echo "PASS: all $(echo "$names" | wc -w) variables documented, runtime table matches the code"
exit $status
