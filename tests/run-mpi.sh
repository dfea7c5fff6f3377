#!/bin/sh
# Runs a test program under MPI: run-mpi.sh NP PROGRAM [ARGS...]
# Adds what this MPI needs on a small shared machine (root, oversubscription),
# keeps Open MPI's own network components out of the way, and gives every
# run its own session directory, so that runs in parallel do not collide.
# MPI_BIND=core binds each rank to a core (benchmarks; default: none).
#
# The launcher is the one of the MPI the program was built for: meson's test
# setup passes the build's -Dmpi (RUN_MPI_IMPL: openmpi or mpich) and the
# launcher it found (RUN_MPI_LAUNCHER); run by hand, the MPI library the
# program loads (ldd) says. MPIEXEC overrides the launcher; a launcher of
# another MPI is refused, since it would start NP jobs of one process each.
# ARMCI_TEST_EXPECT_NP (and ARMCI_TEST_EXPECT_NODES, from ARMCI_NODE_SIZE)
# tell ARMCI_Init what this run asked for; it stops a job that got less.
np=$1
shift

# openmpi, mpich or unknown: the MPI a program (or a script's last argument) loads.
mpi_of_program() {
    for f in "$@"; do
        [ -f "$f" ] || continue
        libs=$(ldd "$f" 2>/dev/null) || continue
        case $libs in
        *libmpich* | *libmpi.so.12* | *libmpi_cray*) echo mpich; return ;; # MPICH's ABI
        *libmpi.so.4*) echo openmpi; return ;;
        esac
    done
    echo unknown
}

# openmpi, mpich or unknown: what `LAUNCHER --version` says it is.
mpi_of_launcher() {
    v=$("$1" --version 2>&1)
    case $v in
    *"Open MPI"* | *OpenRTE* | *open-mpi*) echo openmpi ;;
    *HYDRA* | *mpich* | *MPICH* | *"Intel(R) MPI"*) echo mpich ;;
    *) echo unknown ;;
    esac
}

family=${RUN_MPI_IMPL:-$(mpi_of_program "$@")}
if [ -n "$MPIEXEC" ]; then
    launcher=$MPIEXEC
elif [ -n "$RUN_MPI_LAUNCHER" ]; then
    launcher=$RUN_MPI_LAUNCHER
# programs: mpiexec.openmpi mpiexec.mpich
elif [ "$family" != unknown ] && command -v "mpiexec.$family" >/dev/null; then
    launcher=mpiexec.$family
else
    launcher=mpiexec
fi
launcher_family=$(mpi_of_launcher "$launcher")
# A launcher that does not say what it is (srun, a site wrapper) may start
# the processes: ARMCI_Init then checks their number.
if [ "$family" != unknown ] && [ "$launcher_family" != unknown ] &&
    [ "$launcher_family" != "$family" ]; then
    echo "run-mpi.sh: $launcher is a launcher of $launcher_family, but $1 is built for" \
        "$family: its $np processes would run as $np separate jobs." \
        "Set MPIEXEC to $family's mpiexec (e.g. mpiexec.$family)." >&2
    exit 1
fi

export ARMCI_TEST_EXPECT_NP="$np"
# Virtual nodes are consecutive blocks of ARMCI_NODE_SIZE ranks; without it,
# every rank runs on this host: one node. A caller (rxe: several hosts) may set it.
if [ -z "$ARMCI_TEST_EXPECT_NODES" ]; then
    case ${ARMCI_NODE_SIZE:-0} in
    0) ARMCI_TEST_EXPECT_NODES=1 ;;
    *[!0-9]*) ARMCI_TEST_EXPECT_NODES=0 ;; # invalid: ARMCI_Init says so itself
    *) ARMCI_TEST_EXPECT_NODES=$(((np + ARMCI_NODE_SIZE - 1) / ARMCI_NODE_SIZE)) ;;
    esac
    export ARMCI_TEST_EXPECT_NODES
fi

session=$(mktemp -d "${TMPDIR:-/tmp}/armci-mpirun.XXXXXX") || exit 1
trap 'rm -rf "$session"' EXIT INT TERM
if [ "$launcher_family" = openmpi ]; then
    export OMPI_MCA_pml=ob1 OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp} OMPI_MCA_osc=${OMPI_MCA_osc:-sm,pt2pt}
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
    export OMPI_MCA_orte_tmpdir_base="$session"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    "$launcher" --allow-run-as-root --oversubscribe --bind-to "${MPI_BIND:-none}" -np "$np" "$@"
else
    # MPICH's Hydra passes the environment on; it binds nothing unless asked.
    TMPDIR="$session" "$launcher" ${MPI_BIND:+-bind-to "$MPI_BIND"} -n "$np" "$@"
fi
