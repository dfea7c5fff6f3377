#!/bin/sh
# measure-memory.sh BUILD_DIR [PROCS...]: the runtime's memory per process (the
# connection report's rt_mem_* and mem_<kind>_avg) for LU, RandomAccess, LJ and a
# 20-array allocation, at each process count (default 2 16 64 128 256), with
# ARMCI_NODE_SIZE=1 and 4 (NODE_SIZES overrides). One line per run on stdout:
#   case=NAME node_size=K <the ARMCI_CONN_REPORT fields>
# Small problems (as in the apps suite), so that 256 oversubscribed processes run on a
# laptop; docs/SCALING.md compares these numbers with the model.
set -u
build=${1:?usage: measure-memory.sh BUILD_DIR [PROCS...]}
shift
procs=${*:-2 16 64 128 256}
here=$(cd "$(dirname "$0")" && pwd)
export ARMCI_SOFTIB_LIBRARY="$build/softib/libsoftib.so" ARMCI_CONN_REPORT=1 ARMCI_VERBOSE=0
export SOFTIB_FABRIC=armci-memory-$$
for np in $procs; do
    for k in ${NODE_SIZES:-1 4}; do
        for c in "lu:$build/apps/lu -n 192 -b 24" \
            "randomaccess:$build/apps/randomaccess -l 16" \
            "lj:$build/apps/lj -c 4 -s 5 -b 16" \
            "arrays20:$build/tests/internode/bench_seg_resolve 20 1000"; do
            name=${c%%:*}
            # shellcheck disable=SC2086 # the command and its options
            out=$(ARMCI_NODE_SIZE=$k "$here/../tests/run-mpi.sh" "$np" ${c#*:} 2>&1)
            rc=$?
            line=$(echo "$out" | grep '^ARMCI_CONN_REPORT')
            if [ $rc -ne 0 ]; then
                line="FAILED exit=$rc"
            elif [ -z "$line" ]; then
                line="no report (one node: nothing between nodes)"
            fi
            echo "case=$name node_size=$k procs=$np ${line#ARMCI_CONN_REPORT }"
        done
    done
done
