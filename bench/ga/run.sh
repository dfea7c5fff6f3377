#!/bin/bash
# A GA-level benchmark: Global Arrays 5.8.2 (../shared/ga) built three ways
# from the same sources, running the same programs at 4 compute processes:
#   odcm-1node    GA over this libarmci, the 4 processes in one node
#   odcm-2vnodes  GA over this libarmci, 2 virtual nodes of 2 (traffic through verbs)
#   armci-mpi     GA over Debian's ARMCI-MPI (MPI RMA)
#   mpi-pr        GA over its own MPI progress-rank runtime: a 5th process, the
#                 progress rank of the one node, serves the other four
#   armci-mpi-tcp, mpi-pr-tcp   the same with Open MPI's shared memory off
#                 (btl self,tcp, osc pt2pt): the peers' nearest thing to a
#                 network on one host (not in the default set)
# Programs: GA's perf.x and perf2.x (bandwidth of get/put/acc by patch size), mir_perf2.x
# (the same on mirrored arrays; they check no data, and the test suite runs only perf2.x),
# bench/ga/ga_ops.c (NGA_Scatter/NGA_Gather/NGA_Read_inc rates), and GA test
# programs that do real work (jacobi, mulmatpatchc, scan_copyc, testmatmultc,
# ga_lu, test). Runs are interleaved (every variant of a program, then the
# next program, the whole round GA_BENCH_REPS times) and the table gives the
# median wall time, launch included; "launch" is an MPI program that only
# starts and ends, the floor every figure stands on.
#
#   bench/ga/run.sh [BUILD_DIR]     (default build; results in bench/results/ga-<date>/)
#
# Then the latency bound: the latency-bound programs run once more over
# this libarmci with bench/opcount.c preloaded, which counts their one-sided
# calls and barriers and times them; bench/ga/opcount.py prices the counts at
# the per-call latency measured here (bench_rma, bench_rate, bench_barrier).
#
# Environment: GA_BENCH_REPS=3, GA_BENCH_PROGRAMS (names, default all above),
# GA_BENCH_VARIANTS (default all four), RESULTS (the results folder),
# GA_BENCH_OPCOUNT (programs counted, default "jacobi ga_lu test"; empty: none). The GA
# builds come from scripts/build-ga.sh GA_BUILD_ONLY=1 (cached across runs), through
# bench/ga/prepare.sh. The same programs between the hosts of the multi-host bed:
# bench/ga/cross-host.sh.
set -eu -o pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
out=${RESULTS:-bench/results/ga-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
reps=${GA_BENCH_REPS:-3}
programs=${GA_BENCH_PROGRAMS:-"launch ga_ops perf perf2 mir_perf2 jacobi mulmatpatchc scan_copyc testmatmultc ga_lu test"}
variants=${GA_BENCH_VARIANTS:-"odcm-1node odcm-2vnodes armci-mpi mpi-pr"}
declare -A ga
kinds=$(for v in $variants; do
    case $v in
    odcm-*) echo odcm ;;
    armci-mpi | armci-mpi-tcp) echo armci-mpi ;;
    mpi-pr | mpi-pr-tcp) echo mpi-pr ;;
    *) echo "bench/ga/run.sh: unknown variant $v" >&2 && exit 2 ;;
    esac
done | sort -u)
# shellcheck disable=SC2086
bench/ga/prepare.sh "$build" "$out" $kinds
while read -r kind dir; do ga[$kind]=$dir; done <"$out/ga-builds.txt"

{
    echo "date: $(date -Iseconds)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "build: $build"
    echo "cores: $(nproc)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    for kind in "${!ga[@]}"; do echo "GA build $kind: ${ga[$kind]}"; done
} >"$out/run-info.txt"

export ARMCI_SOFTIB_LIBRARY=$build/softib/libsoftib.so.0 ARMCI_CONN_REPORT=0
export SOFTIB_FABRIC=armci-ga-bench-$$
program_path() { # VARIANT PROGRAM
    local kind=${1%%-1node}
    kind=${kind%%-2vnodes}
    kind=${kind%%-tcp}
    case $2 in
    launch) echo "$out/launch" ;;
    ga_ops) echo "$out/ga_ops.$kind" ;;
    *) echo "${ga[$kind]}/build/global/testing/$2.x" ;;
    esac
}
# The peers with Open MPI's shared memory off (point to point and RMA over TCP on
# loopback): the nearest thing to a network on one host.
no_shm=("OMPI_MCA_btl=self,tcp" "OMPI_MCA_osc=pt2pt")
run_one() { # VARIANT PROGRAM REP: one timed run, a CSV row
    local v=$1 p=$2 rep=$3 np=4 prog env=() args=()
    prog=$(program_path "$v" "$p")
    case $v in
    odcm-1node) env=("LD_LIBRARY_PATH=$build/armci" ARMCI_NODE_SIZE=0) ;;
    odcm-2vnodes) env=("LD_LIBRARY_PATH=$build/armci" ARMCI_NODE_SIZE=2) ;;
    mpi-pr) [ "$p" = launch ] || np=5 ;; # one progress rank for the one node
    mpi-pr-tcp) env=("${no_shm[@]}") && { [ "$p" = launch ] || np=5; } ;;
    armci-mpi-tcp) env=("${no_shm[@]}") ;;
    esac
    [ "$p" = ga_ops ] && args=("$v" 2000)
    local log=$out/logs/$p.$v.$rep.log t0 t1 status=0
    t0=$(date +%s.%N)
    env "${env[@]}" timeout 900 tests/run-mpi.sh $np "$prog" "${args[@]}" >"$log" 2>&1 || status=$?
    t1=$(date +%s.%N)
    echo "$v,$p,$np,$rep,$(echo "$t1 - $t0" | bc -l | sed 's/^\./0./'),$status"
    [ $status = 0 ] || echo "bench/ga/run.sh: $p on $v exited with $status (log $log)" >&2
}

echo "variant,program,processes,rep,seconds,status" >"$out/ga-wall.csv"
for rep in $(seq 1 "$reps"); do
    for p in $programs; do
        for v in $variants; do
            run_one "$v" "$p" "$rep" | tee -a "$out/ga-wall.csv"
        done
    done
done
# Debian's matplotlib belongs to the system's python3, which may not be the first on PATH.
py=python3
/usr/bin/python3 -c "import matplotlib" 2>/dev/null && py=/usr/bin/python3
"$py" bench/ga/summarize.py "$out" | tee "$out/summary.md"

# ---- the latency bound of the latency-bound programs (odcm variants only)
counted=${GA_BENCH_OPCOUNT-jacobi ga_lu test}
odcm_variants=$(for v in $variants; do case $v in odcm-*) printf '%s ' "$v" ;; esac; done)
[ -n "$counted" ] && [ -n "$odcm_variants" ] || exit 0
bench=$build/bench
[ -e "$bench/libarmci_opcount.so" ] || {
    echo "bench/ga/run.sh: $bench/libarmci_opcount.so missing (configure with -Dbench=true)" >&2
    exit 1
}
node_size_of() { case $1 in odcm-1node) echo 0 ;; *) echo 2 ;; esac; }
{
    echo "variant,class,usec"
    for v in $odcm_variants; do
        ARMCI_NODE_SIZE=$(node_size_of "$v") tests/run-mpi.sh 4 "$bench/bench_barrier" x 1000 |
            awk -F, -v v="$v" '$1 == "armci-rdma-barrier" { print v ",barrier," $7 }
                $1 == "mpi-barrier" { print v ",MPI_Barrier (not in the model)," $7 }'
    done
    case " $odcm_variants " in *" odcm-2vnodes "*)
        # 8 B put/get/acc and Rmw between 2 virtual nodes of one process each.
        ARMCI_NODE_SIZE=1 tests/run-mpi.sh 2 "$bench/bench_rma" odcm 8 |
            awk -F, '$4 == 8 && ($3 == "put" || $3 == "get" || $3 == "acc-dbl") {
                sub(/-dbl/, "", $3); print "odcm-2vnodes," $3 "," $6 }'
        ARMCI_NODE_SIZE=1 tests/run-mpi.sh 2 "$bench/bench_rate" odcm cross-node 1 2000 |
            awk -F, '$3 == "rmw-fadd-long" { print "odcm-2vnodes,rmw," $7 }'
        ;;
    esac
} >"$out/latency.csv"
for p in $counted; do
    for v in $odcm_variants; do
        dir=$out/opcount/$p.$v
        mkdir -p "$dir"
        env LD_LIBRARY_PATH="$build/armci" ARMCI_NODE_SIZE="$(node_size_of "$v")" \
            LD_PRELOAD="$bench/libarmci_opcount.so" OPCOUNT_DIR="$dir" \
            timeout 900 tests/run-mpi.sh 4 "$(program_path "$v" "$p")" >"$out/logs/opcount.$p.$v.log" 2>&1 ||
            echo "bench/ga/run.sh: counting $p on $v failed (log $out/logs/opcount.$p.$v.log)" >&2
    done
done
"$py" bench/ga/opcount.py "$out" | tee -a "$out/summary.md"
