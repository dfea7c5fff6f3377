#!/bin/sh
# Runs a test program under MPI: run-mpi.sh NP PROGRAM [ARGS...]
# Adds what this MPI needs on a small shared machine (root, oversubscription),
# keeps Open MPI's own network components out of the way, and gives every
# run its own session directory, so that runs in parallel do not collide.
# MPI_BIND=core binds each rank to a core (benchmarks; default: none).
np=$1
shift
launcher=${MPIEXEC:-mpiexec}
session=$(mktemp -d "${TMPDIR:-/tmp}/armci-mpirun.XXXXXX") || exit 1
trap 'rm -rf "$session"' EXIT INT TERM
if "$launcher" --version 2>/dev/null | grep -qE "Open MPI|OpenRTE|open-mpi"; then
    export OMPI_MCA_pml=ob1 OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp} OMPI_MCA_osc=sm,pt2pt
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
    export OMPI_MCA_orte_tmpdir_base="$session"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    "$launcher" --allow-run-as-root --oversubscribe --bind-to "${MPI_BIND:-none}" -np "$np" "$@"
else
    TMPDIR="$session" "$launcher" -n "$np" "$@"
fi
