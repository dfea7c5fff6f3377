#!/bin/sh
# Quick start, command 1: installs what is missing, builds, and runs the
# main job: the LU factorization on 4 processes in 2 virtual nodes (every
# byte between the nodes through verbs, here the softib device), which ends
# with the connection report.
set -e
cd "$(dirname "$0")/.."
scripts/install-deps.sh # the `run` set of scripts/deps.txt: compiler, Meson, MPI, rdma-core headers
scripts/build.sh
build=${BUILD_DIR:-build}
export ARMCI_NODE_SIZE=${ARMCI_NODE_SIZE:-2}
export ARMCI_SOFTIB_LIBRARY=${ARMCI_SOFTIB_LIBRARY:-$PWD/$build/softib/libsoftib.so.0}
exec tests/run-mpi.sh 4 "$build/apps/lu" -n 1024 -b 64
