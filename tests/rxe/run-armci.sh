#!/bin/sh
# Runs the runtime's multi-node tests over real rdma-core: rdma_rxe
# (Soft-RoCE, RoCEv2, GID addressing) in a throw-away VM, with
# ARMCI_VERBS=rdma-core, in one boot (meson suite rxe; needs
# ../shared/tools/rxe-vm).
#   tests/rxe/run-armci.sh [BUILD_DIR]      (default: build)
# RXE_CASES="NAME..." runs only the cases of these names (one boot all the same); unset, the
# CI set below; RXE_CASES=all, every case. The CI set proves each path of the runtime on a
# real provider once (RC on demand and static, messages, strided, user memory, the RDMA
# barrier, locks, atomics, the hybrid UD path, a connection cap, attacks on the UD port);
# the others repeat them at other layouts. Under TCG every case costs about 11 s of the
# test command's 35 minutes.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
. "$top/tests/rxe/vm-sees-build.sh"
vm=$top/../shared/tools/rxe-vm/run-in-vm.sh
[ -x "$vm" ] || { echo "run-armci.sh: $vm not found" >&2; exit 2; }
[ -x "$build/tests/common/test_rma" ] || { echo "run-armci.sh: build $build first" >&2; exit 2; }
vm_sees_build run-armci.sh "$build" "$top" || exit 2

ci_cases="rma-4x2 rma-3x1-static msg-4x2 strided-3x1 user-memory-4x2 barrier-4x1 lock-fifo-4x1
rmw-mixed-4x2 rma-4x1-hybrid-ud chain-4x1-hybrid-cap1 ud-all-attacks-4x2"
ci_cases=$(echo $ci_cases) # one line: it goes into the VM's script
inner='cd '"$build"'
export ARMCI_VERBS=rdma-core ARMCI_CONN_REPORT=0
fails=0 ran=0
only=" '"${RXE_CASES:-$ci_cases}"' "
run() { # NAME NP NODE_SIZE PROGRAM ARGS...
    name=$1 np=$2 ns=$3
    shift 3
    case $only in *" all "* | *" $name "*) ;; *) return ;; esac
    start=$(date +%s) ran=$((ran + 1))
    if ARMCI_NODE_SIZE=$ns '"$top"'/tests/run-mpi.sh $np "$@" >/tmp/out 2>&1 && grep -q PASS /tmp/out; then
        echo "ok   $name ($(($(date +%s) - start)) s)"
    else
        echo "FAIL $name ($(($(date +%s) - start)) s)"; tail -20 /tmp/out; fails=$((fails + 1))
    fi
}
run rma-4x1 4 1 tests/common/test_rma 65536 10
run rma-4x2 4 2 tests/common/test_rma 65536 10
ARMCI_CONNECT=static run rma-3x1-static 3 1 tests/common/test_rma 65536 10
ARMCI_CONNECT_PROTOCOL=serial run rma-3x1-serial 3 1 tests/common/test_rma 65536 10
run msg-4x2 4 2 tests/common/test_msg 65537 # records to 64 KiB + 1: softib takes them to 4 MiB
run strided-3x1 3 1 tests/strided/test_strided 10
run flag-3x1 3 1 tests/strided/test_flag 10
run user-memory-4x2 4 2 tests/strided/test_user_memory 3
# Gets into user memory mapped again at the same address: bounced here (rxe pins pages). In
# CI its own test (rdma-core-user-gets) runs it.
run user-gets-2x1 2 1 tests/strided/test_user_gets 2
run barrier-4x1 4 1 tests/barrier/test_barrier 200
run lock-fifo-4x1 4 1 tests/internode/test_lock_fifo
run chain-4x2 4 2 tests/internode/test_chain 3 600
run rmw-mixed-4x2 4 2 tests/internode/test_rmw_mixed 200
# The hybrid UD data path over rdma-core UD (RoCEv2 GRHs, a 1024-byte port MTU).
ARMCI_HYBRID=ud run rma-4x1-hybrid-ud 4 1 tests/common/test_rma 65536 10
ARMCI_HYBRID=ud run rmw-mixed-4x2-hybrid-ud 4 2 tests/internode/test_rmw_mixed 200
ARMCI_MAX_CONNECTIONS=1 run chain-4x1-hybrid-cap1 4 1 tests/internode/test_chain 3 600
ARMCI_BARRIER=mpi run patterns-ring-4x1 4 1 tests/odcm/test_patterns ring
ARMCI_BARRIER=mpi ARMCI_CONNECT_TIMEOUT=60 run ud-all-attacks-4x2 4 2 tests/hardening/attacks/ud_attack all
# A name in the set that no case has (a case renamed) would leave its path unproved.
case $only in *" all "*) ;; *)
    asked=$(echo $only | wc -w)
    [ $ran -eq $asked ] || { echo "FAIL rxe: $asked cases asked for, $ran run (a name unknown?)"; fails=$((fails + 1)); } ;;
esac
echo "rxe: $fails failed"
exit $fails'
exec "$vm" -C "$top" -t 1500 -- sh -c "$inner"
