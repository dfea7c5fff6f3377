#!/bin/sh
# ptracer.sh JOB: what softib declares to Yama, seen with strace, for each
# ptrace_scope. A private mount of /proc/sys/kernel (a tmpfs holding only
# yama/ptrace_scope) shows the job the value we want, whatever the host has.
# absent, 0: no PR_SET_PTRACER at all. 1: each process names its parent,
# never "any". 1 with SOFTIB_PTRACER=any: "any". 2: nothing, and a warning.
# The job runs normally every time (without Yama the kernel refuses the
# prctl itself, which the job reports and survives).
job=$1
if [ "$(id -u)" != 0 ]; then
    echo "skip: must run as root to mount a private /proc/sys/kernel"
    exit 77
fi
# strace missing is a failure (scripts/deps.txt has it); strace not permitted here is a skip.
"$(dirname "$0")/../../../scripts/check-programs.sh" strace || exit 1
if ! strace -o /dev/null true 2>/dev/null; then
    echo "skip: strace is not permitted here"
    exit 77
fi
if ! unshare --mount true 2>/dev/null; then
    echo "skip: unshare --mount is not permitted"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}

# run SCOPE [VAR=VALUE...]: the job under strace with that scope ("" = no Yama)
run() {
    scope=$1
    shift
    unshare --mount --propagation private sh -c '
        mount -t tmpfs -o size=1m none /proc/sys/kernel || exit 99
        if [ -n "$1" ]; then mkdir /proc/sys/kernel/yama && echo "$1" > /proc/sys/kernel/yama/ptrace_scope; fi
        shift
        exec env SIB_JOB_SAY_PIDS=1 "$@"' sh "$scope" "$@" strace -f -qq -e trace=prctl -o "$tmp/trace" "$job" > "$tmp/out" 2>&1
    status=$?
    if [ $status -ne 0 ] || ! grep -q '^job: ok' "$tmp/out"; then
        fail "scope '${scope:-absent}' $*: the job failed (status $status)"
        cat "$tmp/out"
    fi
}

declared() {
    grep -c 'PR_SET_PTRACER' "$tmp/trace"
}

for scope in "" 0; do
    run "$scope"
    [ "$(declared)" = 0 ] && echo "ok: scope ${scope:-absent}: no PR_SET_PTRACER" ||
        fail "scope ${scope:-absent}: $(grep PR_SET_PTRACER "$tmp/trace")"
done

run 1
n=0
for pp in $(sed -n 's/^job: .* pid \([0-9]*\) ppid \([0-9]*\)$/\1:\2/p' "$tmp/out"); do
    pid=${pp%:*}
    ppid=${pp#*:}
    if grep -Eq "^$pid +prctl\(PR_SET_PTRACER, $ppid[,)]" "$tmp/trace"; then
        n=$((n + 1))
    else
        fail "scope 1: process $pid did not name its parent $ppid: $(grep "^$pid " "$tmp/trace")"
    fi
done
[ $n = 2 ] && echo "ok: scope 1: both processes name their parent as ptracer" ||
    fail "scope 1: $n processes named their parent"
grep -q 'PR_SET_PTRACER_ANY\|PR_SET_PTRACER, -1\|0xffffffff' "$tmp/trace" && fail "scope 1: 'any' declared"

run 1 SOFTIB_PTRACER=any
[ "$(grep -c 'PR_SET_PTRACER, \(PR_SET_PTRACER_ANY\|-1\|0xffffffff\)' "$tmp/trace")" = 2 ] &&
    echo "ok: scope 1, SOFTIB_PTRACER=any: both processes allow any ptracer" ||
    fail "SOFTIB_PTRACER=any: $(grep PR_SET_PTRACER "$tmp/trace")"

run 2
[ "$(declared)" = 0 ] || fail "scope 2: $(grep PR_SET_PTRACER "$tmp/trace")"
grep -q 'softib: Yama ptrace_scope=2' "$tmp/out" && echo "ok: scope 2: nothing declared, warned" ||
    fail "scope 2: no warning"
exit $failed
