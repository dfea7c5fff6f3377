#!/bin/sh
# The launcher of Global Arrays' `make check` under scripts/build-ga.sh.
#
#   ga-mpiexec.sh NP PROGRAM [ARGS...]   PROGRAM on NP processes
#   ga-mpiexec.sh --ga-test TEST         LOG_COMPILER for GA's test harness:
#        TEST runs alone if it is one of $GA_SERIAL_TESTS, else on $GA_NPROCS
#        (default 4) processes.
#
# Why --ga-test: GA's Makefile.am sets LOG_COMPILER to
#   maybe_mpiexec=`...MPIEXEC with %NP% replaced...`; eval $$maybe_mpiexec
# which worked with automake 1.11's harness. Automake >= 1.12 (Debian's, which
# generated GA 5.8.2's distributed Makefile.in) hands LOG_COMPILER to its
# test-driver as the command to run: every test then "fails" with
# "maybe_mpiexec=...: command not found". build-ga.sh passes
# LOG_COMPILER='env GA_SERIAL_TESTS="$(SERIAL_TESTS)" ga-mpiexec.sh --ga-test'
# to `make check`, which does what GA's line means.
#
# Parallel runs go through tests/run-mpi.sh (Open MPI as root,
# oversubscription, a session directory of their own). Every run is under
# `timeout` ($GA_TEST_TIMEOUT seconds, default 600), which signals its whole
# process group: mpirun and every rank go. Open MPI's shared-memory segments
# go to a directory of this run, removed afterwards, so that a killed run
# leaves nothing in /dev/shm. With GA_TIMING_FILE set, appends
# "PROGRAM SECONDS STATUS NP" to it (NP 0: run alone).
here=$(cd "$(dirname "$0")" && pwd)
limit=${GA_TEST_TIMEOUT:-600}
if [ "$1" = --ga-test ]; then
    shift
    test=${1#./}
    case " $GA_SERIAL_TESTS " in
    *" $test "*) np=0 ;;
    *) np=${GA_NPROCS:-4} ;;
    esac
else
    np=$1
    shift
fi
# GA_DEADLINE (seconds since the epoch, set by build-ga.sh from its time
# budget): a test that would start past it is skipped (exit 77), and none runs
# beyond it; ga-results.sh finds these skips in the tests' logs and fails the
# run for them.
if [ -n "${GA_DEADLINE:-}" ]; then
    left=$((GA_DEADLINE - $(date +%s)))
    if [ "$left" -lt 30 ]; then
        echo "ga-mpiexec: SKIP: the time budget (GA_TIME_BUDGET) is spent: $*"
        exit 77
    fi
    if [ "$left" -lt "$limit" ]; then
        limit=$left
        clipped=1
    fi
fi
shmdir=$(mktemp -d "${TMPDIR:-/tmp}/ga-mpiexec.XXXXXX") || exit 1
export OMPI_MCA_btl_vader_backing_directory="$shmdir"
start=$(date +%s)
if [ "$np" = 0 ]; then
    timeout -k 20 "$limit" "$@"
else
    timeout -k 20 "$limit" "$here/../tests/run-mpi.sh" "$np" "$@"
fi
status=$?
rm -rf "$shmdir"
[ -n "${GA_TIMING_FILE:-}" ] && echo "$1 $(($(date +%s) - start)) $status $np" >> "$GA_TIMING_FILE"
case $status in
124 | 137)
    # Stopped by the end of the time budget, not by its own timeout: not run to the end.
    if [ -n "${clipped:-}" ]; then
        echo "ga-mpiexec: SKIP: the time budget ran out after ${limit}s: $*" >&2
        exit 77
    fi
    echo "ga-mpiexec: TIMEOUT: killed after ${limit}s: $*" >&2
    ;;
esac
exit $status
