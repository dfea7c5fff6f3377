#!/bin/sh
# Runs every benchmark side by side and prints a summary of the ratios the
# issues ask for. CSV files and PNG plots go to bench/results/<date>/ (or $RESULTS).
#   bench/run-all.sh [BUILD_DIR]
# Each benchmark compares within one run: ours vs ARMCI-MPI (the same
# source built against Debian's libarmci-mpi-dev), ODCM vs static, overlap
# vs serial, RDMA barrier vs MPI_Barrier vs send/receive.
set -e
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build}}
build=$(cd "$build" && pwd) || { echo "no build directory $build" >&2; exit 1; }
out=${RESULTS:-bench/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
run="timeout 900 tests/run-mpi.sh"
# Two-process runs bind each rank to a core: the data server's node then runs its rank and
# its server thread on one core, the client on the other, and figures stop depending on where
# the scheduler happened to put them (runs with more ranks than cores stay unbound).
pair="env MPI_BIND=core $run"
export ARMCI_SOFTIB_LIBRARY=${ARMCI_SOFTIB_LIBRARY:-$build/softib/libsoftib.so.0}
export ARMCI_CONN_REPORT=0 SOFTIB_FABRIC=armci-bench-$$
have_armci_mpi=$([ -x "$build/bench/bench_rma_armci_mpi" ] && echo 1 || echo 0)
# Each run's rank 0 writes its CSV to a file of its own (BENCH_CSV), where nothing else
# writes: stdout under mpirun carries every rank's output and the launcher's warnings, in
# whatever order they reach it. What a run prints goes to logs/NAME.log.
#   csv NAME COMMAND...  one run, its CSV kept in parts/
#   merge NAME           NAME.csv from those runs, merged by header (bench/merge_csv.py)
mkdir -p "$out/parts" "$out/logs"
runs=0
csv() {
    name=$1
    shift
    runs=$((runs + 1))
    BENCH_CSV="$out/parts/$name.$(printf %03d $runs).csv" "$@" >>"$out/logs/$name.log"
}
merge() {
    python3 bench/merge_csv.py "$out/$1.csv" "$out"/parts/"$1".*.csv
}
# What the figures were measured on: other load on the host shows in them.
{
    echo "date: $(date -Iseconds)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "build: $build"
    echo "cores: $(nproc)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/run-info.txt"

echo "== softib raw verbs (2 processes)"
timeout 600 "$build/bench/softib/softib-bench" >"$out/parts/softib.001.csv"
SOFTIB_BENCH_SMALL_PAGES=1 timeout 600 "$build/bench/softib/softib-bench" \
    >"$out/parts/softib-4k.001.csv"
merge softib
merge softib-4k

echo "== contiguous put/get/acc: same node and across virtual nodes"
csv rma env ARMCI_NODE_SIZE=0 $pair 2 "$build/bench/bench_rma" odcm
csv rma env ARMCI_NODE_SIZE=1 $pair 2 "$build/bench/bench_rma" odcm
if [ "$have_armci_mpi" = 1 ]; then
    # ARMCI-MPI has no virtual nodes: its two processes share the host (MPI RMA).
    csv rma $pair 2 "$build/bench/bench_rma_armci_mpi" armci-mpi 4194304 same-host
fi
merge rma

echo "== message rate: 8 B non-blocking put/get/acc, 1 to 256 outstanding; PutV/AccV of 1024 x 8 B; Rmw"
csv rate env ARMCI_NODE_SIZE=1 $pair 2 "$build/bench/bench_rate" odcm
csv rate env ARMCI_NODE_SIZE=0 $pair 2 "$build/bench/bench_rate" odcm
if [ "$have_armci_mpi" = 1 ]; then
    csv rate $pair 2 "$build/bench/bench_rate_armci_mpi" armci-mpi same-host
fi
merge rate

echo "== strided 2-D patches, 4x4 to 1024x1024"
csv strided env ARMCI_NODE_SIZE=0 $pair 2 "$build/bench/bench_strided" odcm same-node default
csv strided env ARMCI_NODE_SIZE=1 $pair 2 "$build/bench/bench_strided" odcm cross-node default
csv strided env ARMCI_NODE_SIZE=1 ARMCI_STRIDED_THRESHOLD=0 \
    $pair 2 "$build/bench/bench_strided" odcm cross-node all-rdma
csv strided env ARMCI_NODE_SIZE=1 ARMCI_STRIDED_THRESHOLD=100000000 \
    $pair 2 "$build/bench/bench_strided" odcm cross-node all-packed
if [ "$have_armci_mpi" = 1 ]; then
    csv strided $pair 2 "$build/bench/bench_strided_armci_mpi" armci-mpi same-host default
fi
merge strided

echo "== GA's shapes: 2-D patches from malloc'd vs registered local memory, 2 and 4 ranks"
# 2 ranks bound (one per virtual node), then 4 unbound ranks on 2 virtual nodes as GA's
# perf.x runs (the idle two wait in ARMCI_Barrier); the registration cache off and on.
csv ga-patch env ARMCI_NODE_SIZE=1 $pair 2 "$build/bench/bench_ga_patch" odcm 2x1 default
csv ga-patch env ARMCI_NODE_SIZE=1 ARMCI_REG_CACHE=0 \
    $pair 2 "$build/bench/bench_ga_patch" odcm 2x1 no-reg-cache
csv ga-patch env ARMCI_NODE_SIZE=2 $run 4 "$build/bench/bench_ga_patch" odcm 2x2 default
csv ga-patch env ARMCI_NODE_SIZE=2 ARMCI_REG_CACHE=0 \
    $run 4 "$build/bench/bench_ga_patch" odcm 2x2 no-reg-cache
merge ga-patch

echo "== connection establishment (softib paper cost model)"
# 32 processes are 32 virtual nodes of one rank each, oversubscribed on this host.
for np in 2 8 32; do
    for mode in "ondemand overlap" "ondemand serial" "static overlap"; do
        set -- $mode
        csv connect env SOFTIB_COST_MODEL=paper ARMCI_NODE_SIZE=1 ARMCI_CONNECT=$1 \
            ARMCI_CONNECT_PROTOCOL=$2 $run $np "$build/bench/bench_connect"
    done
done
merge connect

echo "== threads: MPI_THREAD_SINGLE vs MULTIPLE, message rate with 1, 2, 4 threads"
for ns in 0 1; do
    for level in single multiple; do
        csv threads env ARMCI_NODE_SIZE=$ns $pair 2 "$build/bench/bench_threads" $level
    done
done
merge threads

echo "== barrier latency"
for btl in "self,vader,tcp shm" "self,tcp tcp"; do
    set -- $btl
    for ns in 1 2; do
        for np in 2 3 4 5 6 7 8; do
            csv barrier env OMPI_MCA_btl=$1 ARMCI_NODE_SIZE=$ns \
                $run $np "$build/bench/bench_barrier" $ns 1000 $2
        done
    done
done
merge barrier

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/run-info.txt"

echo "== plots"
# Debian's matplotlib belongs to the system's python3, which may not be the first on PATH.
plot_python=""
for py in python3 /usr/bin/python3; do
    if "$py" -c "import matplotlib" 2>/dev/null; then plot_python=$py; break; fi
done
if [ -n "$plot_python" ]; then
    "$plot_python" bench/plot.py "$out" || echo "plots failed (the CSV files are complete)"
else
    echo "plots skipped: matplotlib is missing (Debian package python3-matplotlib)"
fi

echo "results in $out"
cat "$out/run-info.txt"
python3 bench/summarize.py "$out"
