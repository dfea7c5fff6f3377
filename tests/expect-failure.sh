#!/bin/sh
# expect-failure.sh [--status N] TEXT COMMAND [ARGS...]
# Passes when COMMAND fails (non-zero exit; with --status, exactly N) and its
# output contains TEXT. A crash or an abort is a failure too: --status tells
# the intended error exit from one.
want=""
if [ "$1" = --status ]; then
    want=$2
    shift 2
fi
text=$1
shift
out=$("$@" 2>&1)
status=$?
if [ $status -ne 0 ] && { [ -z "$want" ] || [ "$status" = "$want" ]; } &&
    printf '%s' "$out" | grep -qF -- "$text"; then
    echo "failed as expected (exit status $status): $(printf '%s' "$out" | grep -F -- "$text" | head -1)"
    exit 0
fi
echo "expected a failure${want:+ with exit status $want} mentioning: $text"
echo "got exit status $status and:"
printf '%s\n' "$out"
exit 1
