#!/bin/sh
# promote-backoff.sh RUN_MPI LJ: a node whose promoted RC connection keeps being closed under a
# cap is promoted less and less often (transport/dgram.c, dgram_count_op): each promotion
# doubles the UD operations the next one costs. LJ at 6 x 2 (3 nodes) under a cap of one
# connection: every promotion fills the slot, and the servers' soft cap of one asks the other
# clients to close theirs. A node that has had p promotions has been sent at least
# price * (2^p - 1) operations over UD, so over the (process, remote node) pairs
#   promotions <= pairs * log2(1 + ud_ops / (pairs * price))
# (the sum of logs is largest when the operations are spread evenly). At a fixed price the
# operation after each closing promotes again: several times as many (280-350 here).
run_mpi=$1 lj=$2
report=$(mktemp)
trap 'rm -f "$report"' EXIT
field() { "$(dirname "$0")/../conn-report-field.sh" "$1" "$report"; }
fail() { echo "FAIL: $*"; exit 1; }
procs=6 node_size=2 price=5
export ARMCI_NODE_SIZE=$node_size ARMCI_MAX_CONNECTIONS=1 ARMCI_HYBRID=auto ARMCI_HYBRID_PROMOTE=$price
ARMCI_CONN_REPORT=file:$report "$run_mpi" $procs "$lj" -c 3 -b 4 -s 6 || fail "lj failed"
ud_ops=$(field ud_ops) promotions=$(field promotions) closed=$(field closed)
[ -n "$ud_ops" ] && [ -n "$promotions" ] || fail "no hybrid fields in the report"
pairs=$((procs * (procs / node_size - 1)))
awk -v u="$ud_ops" -v p="$promotions" -v n="$pairs" -v c="$price" -v cl="$closed" 'BEGIN {
    bound = n * log(1 + u / (n * c)) / log(2)
    printf "%d operations over UD, %d promotions (bound %.1f), %d closings\n", u, p, bound, cl
    exit !(p > 0 && p <= bound) }' || fail "promotions not backed off (or none at all)"
echo "PASS"
