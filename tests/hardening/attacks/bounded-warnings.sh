#!/bin/sh
# bounded-warnings.sh MAX CMD...: runs CMD and passes when it succeeds and its output has at
# most MAX warnings about refused datagrams, failed receives and UD QP resets (each
# endpoint warns a few times, then only counts: a flood of stray datagrams must not flood
# the log).
max=$1
shift
out=$(mktemp "${TMPDIR:-/tmp}/armci-warnings.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT INT TERM
"$@" >"$out" 2>&1
rc=$?
cat "$out"
n=$(grep -c -E "UD channel.*(dropped a datagram|receive failed|QP reset)" "$out")
echo "warnings about refused datagrams, failed receives, QP resets: $n (at most $max)"
[ "$rc" -eq 0 ] || exit "$rc"
if [ "$n" -gt "$max" ]; then
    echo "FAIL: more than $max such warnings"
    exit 1
fi
exit 0
