#!/bin/sh
# run.sh SET HOSTS [BUILD_DIR]: boots a test cluster of HOSTS hosts
# (cluster.sh) and runs the case set SET of cases.sh on it, with the build in
# BUILD_DIR (default: build) seen at the same path on every host.
#   tests/multihost/run.sh ci 2 build       (the CI stage: meson suite multihost)
#   tests/multihost/run.sh hosts 4 build    (every case, 4 hosts x 1 rank)
#   tests/multihost/run.sh slurm 2 build    (jobs under Slurm: srun, sbatch, salloc)
# MH_PER_HOST sets ranks per host (default 4 / HOSTS); the log of every case
# is kept in BUILD_DIR/multihost-logs/SET-HOSTS/.
set -u
set_name=$1 hosts=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${3:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
[ -x "$build/apps/lu" ] || { echo "run.sh: build $build first (ninja -C $build)" >&2; exit 2; }
build=$(cd "$build" && pwd -P)
# What the sets run on the hosts besides the bed itself (packages: scripts/deps.txt).
case +$set_name+ in
*+faults+* | *+speed+* | *+peers+*)
    "$top/scripts/check-programs.sh" ib_write_lat ib_read_lat ib_write_bw ib_read_bw tc || exit 125 ;;
*+netem+*) "$top/scripts/check-programs.sh" tc || exit 125 ;;
esac
logs=$build/multihost-logs/$set_name-$hosts
mkdir -p "$build/multihost-logs"
exec 8>"$build/multihost-logs/.lock"
flock -n 8 || { echo "run.sh: another multi-host run uses $build; wait for it" >&2; exit 2; }
rm -rf "$logs" && mkdir -p "$logs"
share_build=""
case $build/ in "$top"/*) ;; *) share_build="-C $build" ;; esac
# Slurm's daemons boot only for a set that uses them (cluster.sh -S).
slurm=""
case +$set_name+ in *+slurm+* | *+slurm-*+* | *+ci+*) slurm=-S ;; esac
cpus=2
[ "$hosts" -gt 2 ] && cpus=1
# shellcheck disable=SC2086
exec "$top/tests/multihost/cluster.sh" -n "$hosts" -s "$cpus" -m 1024 -t "${MH_TIMEOUT:-3000}" $slurm \
    -C "$top" $share_build -e "MH_LOGS=$logs" -e "MH_PER_HOST=${MH_PER_HOST:-}" \
    ${MH_GA_TESTX:+-e "MH_GA_TESTX=$MH_GA_TESTX"} \
    ${MH_PEERS_OUT:+-e "MH_PEERS_OUT=$MH_PEERS_OUT" -e "MH_PEERS_REPS=${MH_PEERS_REPS:-}"} \
    ${MH_PEERS_OUT:+-e "MH_PEERS_MPI=${MH_PEERS_MPI:-}" -e "MH_PEERS_PROGRAMS=${MH_PEERS_PROGRAMS:-}"} \
    -- "$top/tests/multihost/cases.sh" "$set_name" "$build"
