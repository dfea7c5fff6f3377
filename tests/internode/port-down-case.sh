#!/bin/sh
# port-down-case.sh OUTCOME RUN_MPI NP RANK WINDOW PROGRAM [ARGS...]: runs PROGRAM on NP
# processes with rank RANK's softib port down for WINDOW (AT_MS:FOR_MS, port-down.sh; RANK may
# be a comma-separated list for `recovers`) and checks the outcome:
#   survives  the job ends well (exit 0, no check=FAIL), and RANK said on stderr that its port
#             went down and came back up, with how long it was down;
#   recovers  the job ends well, and a connection broke and was set up anew (recovery.h);
#   lost      the job ends with an error that blames the right end: RANK says its own port is
#             down, or another rank says RANK's node is lost; RANK never blames another node.
outcome=$1 run_mpi=$2 np=$3 rank=$4 window=$5
shift 5
here=$(dirname "$0")
out=$("$run_mpi" "$np" "$here/port-down.sh" "$rank" "$window" "$@" 2>&1)
status=$?
say() { printf '%s\n' "$out" | grep -e "$1" | head -1; }
case $outcome in
survives)
    down="ARMCI warning (rank $rank): port 1 of .* went down"
    up="ARMCI warning (rank $rank): port 1 of .* is up again (.*) after [0-9.]* s"
    if [ $status -eq 0 ] && ! printf '%s\n' "$out" | grep -q "check=FAIL" &&
        [ -n "$(say "$down")" ] && [ -n "$(say "$up")" ]; then
        echo "survived: $(say "$up")"
        exit 0
    fi
    echo "expected the job to end well and rank $rank to say its port went down and came back;" ;;
recovers)
    broke="ARMCI warning (rank [0-9]*): connection to node [0-9]* (.*) broke: .*; recovered in [0-9.]* s"
    if [ $status -eq 0 ] && ! printf '%s\n' "$out" | grep -q "check=FAIL" &&
        printf '%s\n' "$out" | grep -q "check=PASS" && [ -n "$(say "$broke")" ]; then
        echo "recovered: $(say "$broke")"
        exit 0
    fi
    echo "expected the job to end well and a broken connection to be recovered;" ;;
lost)
    own="ARMCI error (rank $rank): port 1 of .* on this host is down"
    other="ARMCI error (rank [0-9]*): node [0-9]* (.*) is lost: its adapter stopped answering"
    wrong="ARMCI error (rank $rank): node [0-9]* (.*) is lost"
    if [ $status -ne 0 ] && [ -n "$(say "$own")$(say "$other")" ] && [ -z "$(say "$wrong")" ]; then
        echo "ended as expected (exit status $status): $(say "$own")$(say "$other")"
        exit 0
    fi
    echo "expected an error naming rank $rank's port or its node, and rank $rank blaming no other node;" ;;
*)
    echo "port-down-case.sh: OUTCOME is survives, recovers or lost, not $outcome" >&2
    exit 2 ;;
esac
echo "got exit status $status and:"
printf '%s\n' "$out"
exit 1
