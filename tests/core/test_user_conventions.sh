#!/bin/sh
# What a user sees outside the API (docs/USER-GUIDE.md, docs/ENVIRONMENT.md):
#   test_user_conventions.sh RUN_MPI TEST_MSG ARMCI_INFO SOFTIB_INFO VERSION MPI
# - ARMCI_CONN_REPORT: stdout by default, stderr, file:PATH, 0; bad values named;
# - a misspelled ARMCI_* variable is warned about once, with the nearest name;
# - armci-info --version/--help, and its report names the loaded library, the
#   MPI built for, fault injection, the providers and their devices;
# - softib-info --version/--help, -f takes the file names -l prints;
# - verbs errors say what to do (unknown ARMCI_IB_DEVICE lists the devices;
#   ARMCI_VERBS=rdma-core without an RDMA device).
run_mpi=$1 prog=$2 info=$3 sinfo=$4 version=$5 mpi=$6
work=$(mktemp -d "${TMPDIR:-/tmp}/armci-conventions.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
ok() { echo "ok: $*"; }
report="ARMCI-ODCM connection report"
job() { # job NAME: 2 processes on 2 nodes, output in $work/NAME.out and .err
    ARMCI_NODE_SIZE=1 "$run_mpi" 2 "$prog" >"$work/$1.out" 2>"$work/$1.err"
}
count() { grep -c -- "$1" "$2"; }

unset ARMCI_CONN_REPORT
job default
[ "$(count "$report" "$work/default.out")" = 1 ] && ok "report on stdout by default" ||
    fail "default: report not on stdout"
ARMCI_CONN_REPORT=stderr job stderr
[ "$(count "$report" "$work/stderr.out")" = 0 ] && [ "$(count "$report" "$work/stderr.err")" = 1 ] &&
    ok "ARMCI_CONN_REPORT=stderr" || fail "ARMCI_CONN_REPORT=stderr: not (only) on stderr"
ARMCI_CONN_REPORT="file:$work/report.txt" job file
[ "$(count "$report" "$work/file.out")" = 0 ] && [ "$(count "$report" "$work/report.txt" 2>/dev/null)" = 1 ] &&
    grep -q "^ARMCI_CONN_REPORT mode=" "$work/report.txt" &&
    ok "ARMCI_CONN_REPORT=file:PATH" || fail "ARMCI_CONN_REPORT=file:PATH: report not (only) in the file"
ARMCI_CONN_REPORT=0 job off
[ "$(cat "$work/off.out" "$work/off.err" | count "$report" -)" = 0 ] && ok "ARMCI_CONN_REPORT=0" ||
    fail "ARMCI_CONN_REPORT=0 printed a report"
ARMCI_CONN_REPORT=stdrr job bad
grep -q 'ARMCI_CONN_REPORT="stdrr" is invalid: expected 1 or stdout, stderr, file:PATH' "$work/bad.err" &&
    ok "bad ARMCI_CONN_REPORT named" || fail "bad ARMCI_CONN_REPORT not named"

export ARMCI_CONN_REPORT=0
ARMCI_NODESIZE=2 job typo
[ "$(count "ARMCI_NODESIZE is not one ARMCI-ODCM knows (did you mean ARMCI_NODE_SIZE?)" "$work/typo.err")" = 1 ] &&
    ok "ARMCI_NODESIZE warned once, ARMCI_NODE_SIZE suggested" || { cat "$work/typo.err"; fail "no single warning for ARMCI_NODESIZE"; }
SOFTIB_UD_LOS=0.1 job typo2
grep -q "SOFTIB_UD_LOS is not one ARMCI-ODCM knows (did you mean SOFTIB_UD_LOSS?)" "$work/typo2.err" &&
    ok "SOFTIB_UD_LOS warned" || fail "no warning for SOFTIB_UD_LOS"
job clean
grep -q "ARMCI warning" "$work/clean.err" && fail "warning in a correct environment: $(grep warning "$work/clean.err")"

out=$("$info" --version) || fail "armci-info --version failed"
printf '%s\n' "$out" | grep -qx "armci-info (ARMCI-ODCM) $version" &&
    printf '%s\n' "$out" | grep -q "^libarmci $version: /.*libarmci.so.0$" &&
    ok "armci-info --version: $(printf '%s' "$out" | tr '\n' ';')" || fail "armci-info --version: $out"
"$info" --help | grep -q "usage: armci-info" && ok "armci-info --help" || fail "armci-info --help"
"$info" --bogus >/dev/null 2>&1 && fail "armci-info accepts --bogus"
out=$("$info")
for want in "^library:  /.*libarmci.so.0" "^build:    mpi=$mpi fault_injection=[01]" "^MPI:      ." \
    "^  rdma-core .*libibverbs.so.1: [0-9]* device" "^  softib    .*libsoftib.so.0[.0-9]*: 1 device (softib0)"; do
    printf '%s\n' "$out" | grep -q -- "$want" && ok "armci-info report has /$want/" ||
        fail "armci-info report lacks /$want/"
done

out=$("$sinfo" --version) && printf '%s\n' "$out" | grep -q "$version" && ok "softib-info --version" ||
    fail "softib-info --version: $out"
"$sinfo" --help | grep -q -- "--version" && ok "softib-info --help" || fail "softib-info --help"
name="conventions-$$"
out=$("$sinfo" -l -f "/dev/shm/softib-fabric-$name") &&
    [ "$(printf '%s\n' "$out" | cut -f1)" = "/dev/shm/softib-fabric-$name" ] &&
    out2=$("$sinfo" -l -f "$name") && [ "$out" = "$out2" ] &&
    ok "softib-info -f takes the file -l prints and the name" || fail "softib-info -f with -l's name: $out"
[ -e "/dev/shm/softib-fabric-$name" ] && fail "softib-info -l created /dev/shm/softib-fabric-$name"

ARMCI_IB_DEVICE=nonexistent job nodev
grep -q "ARMCI_IB_DEVICE=nonexistent: no such verbs device; the devices here are: softib0" "$work/nodev.err" &&
    ok "unknown ARMCI_IB_DEVICE lists the devices" || fail "unknown ARMCI_IB_DEVICE: $(grep error "$work/nodev.err")"
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    ARMCI_VERBS=rdma-core job nohca
    grep -q "no RDMA device is visible on this host.*set ARMCI_VERBS=softib" "$work/nohca.err" &&
        ok "ARMCI_VERBS=rdma-core without a device says what to do" ||
        fail "ARMCI_VERBS=rdma-core without a device: $(grep error "$work/nohca.err")"
else
    echo "skip: this host has RDMA devices (the no-device message is not reachable)"
fi
[ $fails -eq 0 ] && echo "PASS: report destinations, unknown variables, tools, verbs messages"
exit $fails
