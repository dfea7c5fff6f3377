#!/bin/sh
# The check of libarmci_opcount.so: runs bench/opcount_check.c with it
# preloaded on 2 virtual nodes and compares rank 0's rows with the calls the
# program made.  opcount_check.sh RUN_MPI LIBRARY PROGRAM
set -eu
run_mpi=$1 program=$3
library=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") # the ranks resolve it from their own cwd
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ARMCI_NODE_SIZE=1 OPCOUNT_DIR=$dir LD_PRELOAD=$library "$run_mpi" 2 "$program"
# call,where,calls,bytes,pieces (seconds vary)
got=$(grep -v -e '^rank' -e ',run,' "$dir/opcount.0.csv" | cut -d, -f2-6)
expected='Put,remote,3,192,3
Put,node,1,8,1
NbGet,remote,1,8,1
GetS,remote,2,128,8
AccV,remote,1,32,2
Rmw,remote,1,8,1
Wait,-,1,0,0
Barrier,-,1,0,0'
if [ "$got" != "$expected" ]; then
    printf 'opcount_check: rank 0 rows differ.\nexpected:\n%s\ngot:\n%s\n' "$expected" "$got" >&2
    exit 1
fi
grep -q ',run,-,1,0,0,' "$dir/opcount.1.csv" || { echo "opcount_check: no run row for rank 1" >&2; exit 1; }
echo "PASS opcount_check"
