#!/bin/sh
# abort-leftovers.sh RUN_MPI ARMCI_FABRIC FABRIC_NAME: a 4-process ARMCI job on
# two virtual nodes ends with MPI_Abort; its processes are killed without
# leaving softib's fabric. Shows what is left of the job's fabric, then that
# the next process of the user to open the device removes it.
run_mpi=$1
armci=$2
prog=$3
unset SOFTIB_FABRIC
out=$(ARMCI_NODE_SIZE=2 "$run_mpi" 4 "$armci" abort 2>&1)
status=$?
fabric=$(printf '%s\n' "$out" | sed -n 's/^rank [0-9]* fabric //p' | sort -u)
if [ $status -eq 0 ] || [ "$(printf '%s\n' "$out" | grep -c '^rank [0-9]* fabric ')" != 4 ] ||
    [ "$(printf '%s\n' "$fabric" | wc -l)" != 1 ] || [ "$fabric" = none ]; then
    echo "FAIL: expected 4 ranks on one fabric, then MPI_Abort; status $status:"
    printf '%s\n' "$out"
    exit 1
fi
echo "the job was on $fabric and ended with MPI_Abort (status $status)"
if [ -e "$fabric" ]; then
    echo "left after MPI_Abort: $(ls -l "$fabric")"
else
    echo "nothing left after MPI_Abort (the last process out removed it)"
fi
# the next softib open of the user, on a fabric of its own
next=abort-leftovers-next-$$
SOFTIB_FABRIC=$next "$prog" > /dev/null || exit 1
if [ -e "$fabric" ]; then
    echo "FAIL: $fabric is still there after the next open"
    exit 1
fi
if [ -e "/dev/shm/softib-fabric-$next" ]; then
    echo "FAIL: /dev/shm/softib-fabric-$next left behind"
    exit 1
fi
echo "ok: the next open removed it; /dev/shm keeps nothing of the job's fabric"
