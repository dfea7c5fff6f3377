#!/bin/sh
# Issue 50's small-operation rows in interleaved rounds, two libraries side by side:
#   bench/small-ops.sh [BUILD_DIR] [OTHER_ARMCI_DIR] >rows.csv
# OTHER_ARMCI_DIR: the armci/ directory of another build (e.g. the commit before a change),
# loaded through LD_LIBRARY_PATH by this build's benchmark programs; without it only this
# build runs. Rows (ROUNDS rounds, default 5; the 1-minute load average in each row):
#   softib's own 8 B figures: chained writes and reads (512 and 32 per post), the SEND/RECV
#     round trip;
#   8 B put/get/acc at 64 outstanding (bench_rate);
#   8 B put/get/acc latency over RC and over the hybrid UD path (ARMCI_HYBRID=ud), with the
#     data server's polling after work at ARMCI_SERVER_SPIN_US 0 and the default (bench_rma).
# Two ranks on two virtual nodes, each bound to a core (MPI_BIND=core): the client on one,
# the target rank and its data-server thread on the other.
set -e
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
other=${2:-}
export ARMCI_SOFTIB_LIBRARY=${ARMCI_SOFTIB_LIBRARY:-$build/softib/libsoftib.so.0} ARMCI_CONN_REPORT=0
load() { cut -d' ' -f1 /proc/loadavg; }
rows=$(mktemp) errs=$(mktemp)
trap 'rm -f "$rows" "$errs"' EXIT
libs="this=$build/armci"
[ -n "$other" ] && libs="$libs other=$other"
echo "round,lib,what,op,value,unit,load1"
for round in $(seq 1 "${ROUNDS:-5}"); do
    for chain in 512 32; do
        SOFTIB_BENCH_CHAIN=$chain SOFTIB_BENCH_MAX_SIZE=8 "$build/bench/softib/softib-bench" 2>/dev/null |
            awk -F, -v r="$round" -v c=$chain -v l="$(load)" '$1 == 8 {
                printf "%s,softib,chain%s,write,%.0f,ops/s,%s\n", r, c, $6 * 1e6 / 8, l
                printf "%s,softib,chain%s,read,%.0f,ops/s,%s\n", r, c, $7 * 1e6 / 8, l
                if (c == 512) printf "%s,softib,send-recv-round-trip,send,%.2f,us,%s\n", r, 2 * $2, l }'
    done
    # Odd rounds run this build first, even rounds the other: neither always goes first.
    order=$libs
    [ $((round % 2)) = 0 ] && order=$(echo "$libs" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
    for lib in $order; do
        name=${lib%%=*} dir=${lib#*=}
        LD_LIBRARY_PATH=$dir SOFTIB_FABRIC=small-ops-$$-$round BENCH_OPS=put,get,acc BENCH_WINDOWS=64 \
            ARMCI_NODE_SIZE=1 MPI_BIND=core tests/run-mpi.sh 2 "$build/bench/bench_rate" odcm \
            cross-node 64 200000 2>/dev/null |
            awk -F, -v r="$round" -v n="$name" -v l="$(load)" \
                '$5 == 64 { printf "%s,%s,rate-64,%s,%s,ops/s,%s\n", r, n, $3, $8, l }'
        for path in rc ud-spin0 ud; do
            hy=ud spin=
            case $path in rc) hy=off ;; ud-spin0) spin=0 ;; esac
            env LD_LIBRARY_PATH=$dir SOFTIB_FABRIC=small-ops-$$-$round BENCH_OPS=put,get,acc-dbl \
                BENCH_SIZES=8 ARMCI_HYBRID=$hy ${spin:+ARMCI_SERVER_SPIN_US=$spin} ARMCI_NODE_SIZE=1 \
                MPI_BIND=core tests/run-mpi.sh 2 "$build/bench/bench_rma" odcm 8 >"$rows" 2>"$errs" ||
                cat "$errs" >&2
            # A library older than the knob ignores it (and says so): its server still polls
            # after work, so its row is not the spin-0 row and is named apart.
            grep -q 'ARMCI_SERVER_SPIN_US is not one' "$errs" && path=ud-spin-knob-unknown
            awk -F, -v r="$round" -v n="$name" -v p=$path -v l="$(load)" \
                '$4 == 8 { printf "%s,%s,latency-%s,%s,%s,us,%s\n", r, n, p, $3, $6, l }' "$rows"
        done
    done
done
