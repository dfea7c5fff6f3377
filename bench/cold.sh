#!/bin/sh
# Cold-node rate (bench/cold.c) under connection caps, RC only against the hybrid UD path,
# interleaved in one sitting: for each round, for each cap, ARMCI_HYBRID=off then auto.
#   bench/cold.sh [BUILD_DIR]
# COLD_PROCS (64), COLD_NODE_SIZE (1), COLD_CAPS ("4 8 16 0"; 0 = none), COLD_ROUNDS (3),
# COLD_COUNT (operations per process and kind, 2000), COLD_WINDOW (16) and COLD_BYTES (bytes
# per operation, a list: "8") narrow or widen it; ARMCI_HYBRID_SEGMENTED passes through (the
# bytes a transfer cut into several datagrams may have: 0 sends every larger one over RC).
# One CSV line per run and operation (with the round) on stdout.
set -u
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build}}
build=$(cd "$build" && pwd) || { echo "no build directory $build" >&2; exit 1; }
export ARMCI_SOFTIB_LIBRARY=${ARMCI_SOFTIB_LIBRARY:-$build/softib/libsoftib.so.0}
export ARMCI_CONN_REPORT=0
np=${COLD_PROCS:-64}
echo "round,impl,procs,node_size,cap,hybrid,op,bytes,ops,seconds,ops_per_s"
for round in $(seq 1 "${COLD_ROUNDS:-3}"); do
    for bytes in ${COLD_BYTES:-8}; do
    for cap in ${COLD_CAPS:-4 8 16 0}; do
        for hybrid in off auto; do
            ARMCI_NODE_SIZE=${COLD_NODE_SIZE:-1} ARMCI_MAX_CONNECTIONS=$cap ARMCI_HYBRID=$hybrid \
                timeout 600 tests/run-mpi.sh "$np" "$build/bench/bench_cold" odcm \
                "${COLD_COUNT:-2000}" "${COLD_WINDOW:-16}" "$bytes" 2>&1 | grep '^odcm,' |
                sed "s/^/$round,/" || echo "cold: cap $cap hybrid $hybrid failed" >&2
        done
    done
    done
done
