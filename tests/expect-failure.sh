#!/bin/sh
# expect-failure.sh TEXT COMMAND [ARGS...]
# Passes when COMMAND fails (non-zero exit) and its output contains TEXT.
text=$1
shift
out=$("$@" 2>&1)
status=$?
if [ $status -ne 0 ] && printf '%s' "$out" | grep -qF -- "$text"; then
    echo "failed as expected: $(printf '%s' "$out" | grep -F -- "$text" | head -1)"
    exit 0
fi
echo "expected a failure mentioning: $text"
echo "got exit status $status and:"
printf '%s\n' "$out"
exit 1
