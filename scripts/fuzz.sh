#!/bin/sh
# Builds the libFuzzer targets with clang (ASan and UBSan on) in build-fuzz/ and runs each for
# SECONDS_PER_TARGET seconds (default 60), printing the number of executions:
#   ds     the data server's request decoder (tests/fuzz/fuzz_ds.c)
#   ud     the UD connection messages, server and client side (tests/fuzz/fuzz_ud.c)
#   dgram  the data server's datagrams of the hybrid UD data path (tests/fuzz/fuzz_dgram.c)
# Each run starts from the seed corpus tests/fuzz/corpus/<target> (read only) and keeps what it
# finds in build-fuzz/corpus/<target>. A crash leaves build-fuzz/crash-<target>-*: fix the bug,
# then add the input to tests/fuzz/corpus/<target>/ as regress-<what> (the hardening suite
# replays it from then on). Needs clang and libclang-rt-14-dev (scripts/install-deps.sh).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]   (default: every target)
set -e
seconds=${1:-60}
case $seconds in '' | *[!0-9]*)
    echo "usage: $0 [SECONDS_PER_TARGET [TARGET...]]" >&2
    exit 2
    ;;
esac
[ $# -gt 0 ] && shift
targets=${*:-ds ud dgram}
for target in $targets; do
    case $target in ds | ud | dgram) ;; *)
        echo "$0: no fuzz target $target (ds, ud, dgram)" >&2
        exit 2
        ;;
    esac
done
cd "$(dirname "$0")/.."
out=build-fuzz
cc=${FUZZ_CC:-clang}
command -v "$cc" >/dev/null || {
    echo "$cc not found: run scripts/install-deps.sh" >&2
    exit 1
}
# Only MPI's headers are needed (the runtime's headers include mpi.h).
mpi_cflags=$(pkg-config --cflags ompi-c 2>/dev/null || pkg-config --cflags mpich 2>/dev/null ||
    mpicc -showme:compile 2>/dev/null || true)

# The same sources as tests/fuzz/meson.build (keep the two lists in step).
sources_of() {
    case $1 in
    ds) echo "tests/fuzz/fuzz_ds.c tests/fuzz/arena.c armci/dataserver/handlers.c
        armci/dataserver/locks.c armci/dataserver/registry.c armci/strided/stride.c
        armci/core/acc.c armci/core/rmw_kernels.c" ;;
    ud) echo "tests/fuzz/fuzz_ud.c armci/odcm/ud_datagram.c armci/odcm/cm_server.c
        armci/odcm/ondemand.c armci/core/intmap.c armci/core/memstat.c armci/core/retransmit.c" ;;
    dgram) echo "tests/fuzz/fuzz_dgram.c tests/fuzz/arena.c armci/dataserver/dgram_server.c
        armci/dataserver/engine.c        armci/dataserver/handlers.c armci/dataserver/locks.c armci/dataserver/registry.c
        armci/strided/stride.c armci/core/acc.c armci/core/rmw_kernels.c
        armci/core/intmap.c armci/core/memstat.c" ;;
    esac
}

mkdir -p "$out"
failed=""
for target in $targets; do
    sources=$(sources_of "$target")
    bin=$out/fuzz-$target
    echo "== building $bin"
    # shellcheck disable=SC2086
    "$cc" -std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I. -Itests/fuzz -Iarmci -Iinclude $mpi_cflags $sources -o "$bin"

    mkdir -p "$out/corpus/$target"
    log=$out/fuzz-$target.log
    echo "== running $bin for $seconds s"
    rm -f "$out/crash-$target-"*
    dict=""
    [ -f "tests/fuzz/$target.dict" ] && dict="-dict=tests/fuzz/$target.dict"
    rc=0
    # shellcheck disable=SC2086
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$bin" "$out/corpus/$target" \
        "tests/fuzz/corpus/$target" $dict -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/crash-$target-" \
        >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    if [ "$rc" -ne 0 ]; then
        grep -E "ERROR|INVARIANT|runtime error|SUMMARY|Test unit written" "$log" | head -20
        echo "$target: FAILED after ${execs:-?} executions (log: $log)"
        failed="$failed $target"
    else
        echo "$target: ${execs:-?} executions in ${secs:-$seconds} s, no crash (coverage ${cov:-?})"
    fi
done
[ -z "$failed" ] || {
    echo "crashes in:$failed"
    exit 1
}
