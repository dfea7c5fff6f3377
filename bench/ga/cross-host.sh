#!/bin/bash
# cross-host.sh [BUILD_DIR]: ours against its peers between two hosts with a real
# RDMA device: the multi-host bed (tests/multihost: two QEMU hosts, each its own
# kernel with rdma_rxe, on a segment that exists only between them) runs, in one
# boot and interleaved, 2 ranks a host:
#   odcm        this libarmci over rxe0 (its MPI part on TCP)
#   armci-mpi-T Debian's ARMCI-MPI over Open MPI's transport T between the hosts
#   mpi-pr-T    GA over its own MPI progress-rank runtime over the same, one progress
#               rank a host besides the 2 compute ranks (6 processes)
# T: tcp (ob1 over TCP) and ucx (pml and osc ucx over rxe0).
# Rows: 8 B put/get/acc latency and 1 MiB bandwidth (bench_rma, and the same source
# built against ARMCI-MPI), GA's 2-D 2 MiB patch get into malloc'd memory
# (bench_ga_patch, perf.x's shape), GA's ga_ops (NGA_Scatter/NGA_Gather/NGA_Read_inc),
# jacobi, ga_lu and test (wall seconds), and perftest's raw rxe0 figures beside them.
#
#   bench/ga/cross-host.sh [BUILD_DIR]   (default build; results in bench/results/cross-host-<date>/)
#
# Environment: CROSS_HOST_REPS (5 rounds), CROSS_HOST_PROGRAMS (default
# "launch rma patch ga_ops jacobi ga_lu test"), CROSS_HOST_MPI (the peers' transports,
# default "tcp ucx"; ucx runs with UCX_IB_GID_INDEX=0, see tests/multihost/cases.sh),
# RESULTS (the results folder). The hosts run
# under TCG on this machine's shared cores: the ratios are indicative, and only
# those within one boot count. About 40 minutes here.
set -eu -o pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
out=${RESULTS:-bench/results/cross-host-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
case $out/ in "$(pwd)"/* | "$build"/*) ;; *)
    echo "bench/ga/cross-host.sh: RESULTS must be inside the tree or the build (the hosts see those)" >&2
    exit 2 ;;
esac
bench/ga/prepare.sh "$build" "$out" odcm armci-mpi mpi-pr
{
    echo "date: $(date -Iseconds)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "build: $build"
    echo "cores: $(nproc) (the two hosts: 2 virtual CPUs each, under TCG)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "peers' MPI transports: ${CROSS_HOST_MPI:-tcp ucx}"
    while read -r kind dir; do echo "GA build $kind: $dir"; done <"$out/ga-builds.txt"
} >"$out/run-info.txt"
status=0
MH_PEERS_OUT=$out MH_PEERS_REPS=${CROSS_HOST_REPS:-5} MH_PEERS_MPI=${CROSS_HOST_MPI:-tcp ucx} \
    MH_PEERS_PROGRAMS=${CROSS_HOST_PROGRAMS:-launch rma patch ga_ops jacobi ga_lu test} \
    tests/multihost/run.sh peers 2 "$build" | tee "$out/multihost.log" || status=$?
python3 bench/ga/summarize.py --cross-host "$out" | tee "$out/summary.md"
exit $status
