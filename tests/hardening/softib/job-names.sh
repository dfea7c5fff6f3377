#!/bin/sh
# job-names.sh RUN_MPI FABRIC_NAME ARMCI_FABRIC: the default fabric is per job.
# All processes of one mpirun job (virtual nodes included) are on one fabric,
# two jobs at the same time on two; outside a launcher it is the per-user
# one; SOFTIB_FABRIC overrides; names derived from the launcher's variables
# keep to the allowed characters and length. softib-info finds each fabric
# (checked by fabric_name through $SOFTIB_INFO). Nothing is left behind.
run_mpi=$1
prog=$2
armci=$3
uid=$(id -u)
failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}
unset SOFTIB_FABRIC
# what a launcher may have put in our own environment must not leak in
clean="env -u OMPI_MCA_ess_base_jobid -u OMPI_MCA_orte_precondition_transports -u PMIX_NAMESPACE
    -u PMI_RANK -u SLURM_JOB_ID -u SLURM_STEP_ID"

# name_of EXPECTED VAR=VALUE...: one process outside a launcher
name_of() {
    want=$1
    shift
    got=$($clean "$@" "$prog" | sed -n 's/^fabric //p')
    if [ "$got" = "$want" ]; then
        echo "ok: ${*:-outside a launcher} -> $got"
    else
        fail "$*: fabric $got, expected $want"
    fi
}
name_of "/dev/shm/softib-fabric-$uid"
name_of "/dev/shm/softib-fabric-mine" SOFTIB_FABRIC=mine
name_of "/dev/shm/softib-fabric-$uid-slurm-4242.7" SLURM_JOB_ID=4242 SLURM_STEP_ID=7
name_of "/dev/shm/softib-fabric-$uid" SLURM_JOB_ID=4242
name_of "/dev/shm/softib-fabric-$uid-pmix-prterun-vm-1234_1" PMIX_NAMESPACE=prterun-vm-1234_1
odd=$($clean PMIX_NAMESPACE='job/../1 2@x' "$prog" | sed -n 's/^fabric //p')
case $odd in
/dev/shm/softib-fabric-$uid-pmix-job_.._1_2_x-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f])
    echo "ok: odd characters replaced, hash appended: $odd" ;;
*) fail "odd PMIX_NAMESPACE gave $odd" ;;
esac
long=$($clean PMIX_NAMESPACE=$(printf 'n%.0s' $(seq 100)) "$prog" | sed -n 's/^fabric //p')
n=${long#/dev/shm/softib-fabric-}
[ ${#n} -le 64 ] && [ ${#n} -ge 60 ] && echo "ok: a long namespace gives a ${#n}-character name" ||
    fail "a long namespace gave $long"

# two mpirun jobs at the same time, 3 processes each
$clean "$run_mpi" 3 "$prog" 3 > "${TMPDIR:-/tmp}/job-names-a.$$" 2>&1 &
a=$!
$clean "$run_mpi" 3 "$prog" 3 > "${TMPDIR:-/tmp}/job-names-b.$$" 2>&1 &
b=$!
wait $a || fail "job A failed: $(cat "${TMPDIR:-/tmp}/job-names-a.$$")"
wait $b || fail "job B failed: $(cat "${TMPDIR:-/tmp}/job-names-b.$$")"
fa=$(sed -n 's/^fabric //p' "${TMPDIR:-/tmp}/job-names-a.$$" | sort -u)
fb=$(sed -n 's/^fabric //p' "${TMPDIR:-/tmp}/job-names-b.$$" | sort -u)
na=$(grep -c '^fabric ' "${TMPDIR:-/tmp}/job-names-a.$$")
rm -f "${TMPDIR:-/tmp}/job-names-a.$$" "${TMPDIR:-/tmp}/job-names-b.$$"
[ "$na" = 3 ] && [ "$(printf '%s\n' "$fa" | wc -l)" = 1 ] ||
    fail "the 3 processes of job A are not on one fabric: $fa"
[ "$(printf '%s\n' "$fb" | wc -l)" = 1 ] || fail "the processes of job B are not on one fabric: $fb"
[ "$fa" != "$fb" ] || fail "two concurrent jobs share fabric $fa"
case $fa in
/dev/shm/softib-fabric-$uid-?*) echo "ok: concurrent jobs: $fa and $fb" ;;
*) fail "job A is not on a fabric of its own: $fa" ;;
esac

# an ARMCI job over two virtual nodes
out=$(ARMCI_NODE_SIZE=2 $clean "$run_mpi" 4 "$armci" names 2>&1) || fail "the ARMCI job failed: $out"
fs=$(printf '%s\n' "$out" | sed -n 's/^rank [0-9]* fabric //p' | sort -u)
nr=$(printf '%s\n' "$out" | grep -c '^rank [0-9]* fabric ')
if [ "$nr" = 4 ] && [ "$(printf '%s\n' "$fs" | wc -l)" = 1 ] && [ "$fs" != none ]; then
    echo "ok: the 4 ranks of an ARMCI job on 2 virtual nodes share $fs"
else
    fail "ARMCI ranks on fabrics: $fs"
fi

for f in "$fa" "$fb" "$fs" /dev/shm/softib-fabric-mine; do
    [ ! -e "$f" ] || fail "left behind: $f"
done
exit $failed
