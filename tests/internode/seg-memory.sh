#!/bin/sh
# seg-memory.sh RUN_MPI TEST: per-segment metadata grows with nodes, not processes.
# Runs TEST (test_seg_memory) at 16 processes in 4 nodes, 32 in 4 nodes and 32 in 8
# nodes, then compares what each run reports per segment: the segment table must be the
# same for the same nodes whatever the processes, and grow by the same step per node;
# the block index of an irregular array (one record per process, kept once per node; a
# regular array keeps none, which the test itself checks) is the same for the same nodes
# whatever the processes (a process of 8 counts an eighth of twice the records) and doubles
# with the nodes; the directory of UD addresses is the node's once: a process of 8 counts an
# eighth of it; and it keeps no GID bytes a node where the job's GIDs are all alike (softib's
# InfiniBand: unused, 0): a QP number (4 B) and a LID (2 B) a process and a node.
run_mpi=$1
test=$2
line() {
    ARMCI_NODE_SIZE=$2 "$run_mpi" "$1" "$test" | tee /dev/stderr | grep '^SEGMEM' || exit 1
}
field() {
    echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
a=$(line 16 4) || exit 1
b=$(line 32 8) || exit 1
c=$(line 32 4) || exit 1
ta=$(field "$a" table_per_segment) tb=$(field "$b" table_per_segment) tc=$(field "$c" table_per_segment)
ia=$(field "$a" index_per_segment) ib=$(field "$b" index_per_segment) ic=$(field "$c" index_per_segment)
fail=0
if [ "$ta" != "$tb" ]; then
    echo "FAIL: segment table per segment: $ta bytes at 16 processes, $tb at 32 (4 nodes both)"
    fail=1
fi
# 4 more nodes: 4 more node entries, and far less than the doubled processes would cost.
step=$((tc - tb))
if [ "$step" -le 0 ] || [ $((step % 4)) -ne 0 ] || [ "$tc" -ge $((2 * tb)) ]; then
    echo "FAIL: segment table per segment: $tb bytes at 4 nodes, $tc at 8 nodes"
    fail=1
fi
if [ "$ib" -ne "$ia" ] || [ "$ic" -ne $((2 * ib)) ]; then
    echo "FAIL: index per segment and process: $ia bytes at 16 processes in 4 nodes, $ib at 32" \
        "in 4, $ic at 32 in 8"
    fail=1
fi
for l in "$a" "$b" "$c"; do
    if [ "$(field "$l" topology)" != 0 ]; then
        echo "FAIL: topology keeps a table with ARMCI_NODE_SIZE: $l"
        fail=1
    fi
done
# 32 processes in 4 nodes of 8: each counts an eighth of its node's directory (the master the
# rest of the division); in 8 nodes of 4, a quarter.
db=$(field "$b" directory) dnb=$(field "$b" directory_node)
dc=$(field "$c" directory) dnc=$(field "$c" directory_node)
if [ "$dnb" -le 0 ] || [ "$db" -gt $((dnb / 8 + 8)) ] || [ "$dc" -gt $((dnc / 4 + 4)) ]; then
    echo "FAIL: directory per process $db of $dnb (8 a node), $dc of $dnc (4 a node): not shared"
    fail=1
fi
# 32 processes in 8 nodes of 4: a node keeps the 8 holders' entries (every node holds its own,
# as ARMCI_DIRECTORY_BYTES allows up to 1489) and its own 4: 44 B each, 16 B of counts.
if [ "$dnc" -gt $((16 + 44 * (8 + 4))) ]; then
    echo "FAIL: the largest node block of the directory, 32 processes in 8 nodes, is $dnc B"
    fail=1
fi
[ $fail = 0 ] && echo "PASS: table per segment $ta (4 nodes) -> $tc (8 nodes), index $ia (16 in 4) -> $ib (32 in 4) -> $ic (32 in 8)"
exit $fail
