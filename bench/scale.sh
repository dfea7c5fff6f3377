#!/bin/sh
# Scale runs: LU, RandomAccess and LJ at 64, 128 and 256 processes in virtual
# nodes of 1, 4 and 16 processes, without a cap and with ARMCI_MAX_CONNECTIONS=8.
# Each run must finish with its own check passed; its RESULT digest lets a
# capped run be compared byte for byte with an uncapped one. One CSV line per
# run on stdout (and bench/results/<date>/scale.csv when run from run-all.sh):
#   bench/scale.sh [BUILD_DIR]
# SCALE_PROCS, SCALE_NODE_SIZES, SCALE_CAPS (0 = none) and SCALE_APPS narrow it down;
# SCALE_HYBRID lists ARMCI_HYBRID settings to run each configuration with (default: off;
# e.g. "off auto ud": RC only, the hybrid UD path under the cap, every small operation by UD).
# SCALE_CONFIGS="CAP:HYBRID ..." replaces the two lists by these pairs (e.g. "0:off 8:off
# 8:auto 0:ud"), and SCALE_ROUNDS=N repeats the whole set N times, interleaved (the round
# is the CSV's last column). SCALE_FAIL_DIR: where a failed run's whole output is kept.
# All processes share this machine's cores: times are those of an oversubscribed
# host (MPI_Init alone takes ~40 s at 256 processes here); connection counts,
# closings and memory are what a cluster would see.
set -u
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build}}
build=$(cd "$build" && pwd) || { echo "no build directory $build" >&2; exit 1; }
export ARMCI_SOFTIB_LIBRARY=${ARMCI_SOFTIB_LIBRARY:-$build/softib/libsoftib.so.0}
export ARMCI_CONN_REPORT=1

app_args() {
    case $1 in
    lu) echo "$build/apps/lu -n 192 -b 24" ;;          # 2-D block-cyclic: row and column
    randomaccess) echo "$build/apps/randomaccess -l 16" ;; # every process updates everywhere
    lj) echo "$build/apps/lj -c 6 -b 4 -s 1" ;;        # 216 blocks, random pairs of owners
    esac
}

# field NAME LINE: the value of NAME=... in a key=value line, or empty.
field() {
    echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# kinds LINE: ",B,B,..." the report's mem_<kind>_avg of every kind (docs/SCALING.md), in order.
kinds() {
    for kind in segments index directory topology groups sync conns sendq work replies datagram buf_bounce buf_small buf_recv buf_server buf_dgram buf_channel; do
        printf ',%s' "$(field "mem_${kind}_avg" "$1")"
    done
}

echo "app,procs,node_size,nodes,cap,status,check,digest,app_time_s,wall_s,c2s_avg,c2s_max,s2c_avg,s2c_max,c2s_peak_max,s2c_peak_max,closed,reopened,asked,over_cap,setups,setup_us_avg,retrans,mem_bytes,static_mem_bytes,rt_mem_avg,rt_mem_max,hybrid,ud_ops,rc_ops,promotions,ud_retrans,buf_mem_avg,round,ud_nodes_avg,mem_segments_avg,mem_index_avg,mem_directory_avg,mem_topology_avg,mem_groups_avg,mem_sync_avg,mem_conns_avg,mem_sendq_avg,mem_work_avg,mem_replies_avg,mem_datagram_avg,mem_buf_bounce_avg,mem_buf_small_avg,mem_buf_recv_avg,mem_buf_server_avg,mem_buf_dgram_avg,mem_buf_channel_avg"
configs=${SCALE_CONFIGS:-}
if [ -z "$configs" ]; then
    for cap in ${SCALE_CAPS:-0 8}; do
        for hybrid in ${SCALE_HYBRID:-off}; do configs="$configs $cap:$hybrid"; done
    done
fi
for round in $(seq 1 "${SCALE_ROUNDS:-1}"); do
for np in ${SCALE_PROCS:-64 128 256}; do
    for k in ${SCALE_NODE_SIZES:-1 4 16}; do
        for config in $configs; do
          cap=${config%%:*} hybrid=${config#*:}
            for app in ${SCALE_APPS:-lu randomaccess lj}; do
                t0=$(date +%s.%N)
                # shellcheck disable=SC2046 # the command and its options
                out=$(ARMCI_NODE_SIZE=$k ARMCI_MAX_CONNECTIONS=$cap ARMCI_HYBRID=$hybrid timeout 1200 \
                    tests/run-mpi.sh "$np" $(app_args "$app") 2>&1)
                rc=$?
                wall=$(echo "$t0 $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
                result=$(echo "$out" | grep '^RESULT ' | head -n 1)
                report=$(echo "$out" | grep '^ARMCI_CONN_REPORT ' | head -n 1)
                status=ok
                if [ $rc -ne 0 ]; then
                    # softib's fabric holds 16384 QPs: all-to-all at 128+ single-process
                    # nodes needs more (the cap is what makes these runs possible).
                    if echo "$out" | grep -q "ibv_create_qp"; then
                        status=device-qp-limit
                    else
                        status=failed-exit-$rc
                    fi
                    echo "$app $np x $k cap $cap hybrid $hybrid: $status" >&2
                    # The errors of any rank, then how the launcher ended it.
                    echo "$out" | grep -E 'ARMCI error|ARMCI warning|exited on signal|without calling' \
                        | head -n 20 >&2
                    echo "$out" | grep -v '^RESULT' | tail -n 5 >&2
                    if [ -n "${SCALE_FAIL_DIR:-}" ]; then
                        mkdir -p "$SCALE_FAIL_DIR"
                        echo "$out" >"$SCALE_FAIL_DIR/$app-$np-$k-$cap-$hybrid-$round.log"
                    fi
                fi
                nodes=$(( (np + k - 1) / k ))
                echo "$app,$np,$k,$nodes,$cap,$status,$(field check "$result"),$(field digest "$result"),$(field time_s "$result"),$wall,$(field c2s_avg "$report"),$(field c2s_max "$report"),$(field s2c_avg "$report"),$(field s2c_max "$report"),$(field c2s_peak_max "$report"),$(field s2c_peak_max "$report"),$(field closed "$report"),$(field reopened "$report"),$(field asked "$report"),$(field over_cap "$report"),$(field setups "$report"),$(field setup_us_avg "$report"),$(field retrans "$report"),$(field mem_bytes "$report"),$(field static_mem_bytes "$report"),$(field rt_mem_avg "$report"),$(field rt_mem_max "$report"),$hybrid,$(field ud_ops "$report"),$(field rc_ops "$report"),$(field promotions "$report"),$(field ud_retrans "$report"),$(field buf_mem_avg "$report"),$round,$(field ud_nodes_avg "$report")$(kinds "$report")"
            done
        done
    done
done
done
