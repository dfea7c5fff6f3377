#!/bin/sh
# Run softib's verbs-level tests against rdma-core's libibverbs on real
# Soft-RoCE (rdma_rxe) in a throw-away VM: the same programs, built as the
# *-ibverbs executables, must pass there as they do on softib.
#
#   tests/softib/run-rxe.sh [BUILD_DIR]      (default: build)
#
# Needs ../shared/tools/rxe-vm (see its README); one VM boot runs them all.
# Meson suite rxe runs it.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
. "$top/tests/rxe/vm-sees-build.sh"
vm=$top/../shared/tools/rxe-vm/run-in-vm.sh
[ -x "$vm" ] || { echo "run-rxe.sh: $vm not found" >&2; exit 2; }
tests="basic rc rdma chain ud errors events kill roce abi"
for t in $tests; do
    [ -x "$build/tests/softib/softib-test-$t-ibverbs" ] ||
        { echo "run-rxe.sh: build $build first (ninja -C $build)" >&2; exit 2; }
done
vm_sees_build run-rxe.sh "$build" "$top" || exit 2
# The inner script uses only shell builtins between tests (forks are slow
# under TCG) and prints one summary line per program.
inner='fails=0
for t in '"$tests"'; do
    echo "== $t (rxe)"
    '"$build"'/tests/softib/softib-test-$t-ibverbs || fails=$((fails + 1))
done
echo "rxe: $fails program(s) failed"
exit $fails'
exec "$vm" -C "$top" -t 1500 -- sh -c "$inner"
