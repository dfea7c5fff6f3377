#!/bin/bash
# prepare.sh BUILD_DIR OUT KIND...: what the GA benchmarks run, made ready in OUT.
#   KIND: odcm (GA over this libarmci), armci-mpi (over Debian's ARMCI-MPI),
#         mpi-pr (over GA's own MPI progress-rank runtime)
# Each GA build comes from scripts/build-ga.sh GA_BUILD_ONLY=1 (cached across runs,
# keyed by hash; GA_SRC, default ../shared/ga); OUT/ga-builds.txt gets a line
# "KIND DIR" per build; bench/ga/ga_ops.c is compiled against each (OUT/ga_ops.KIND),
# and OUT/launch is an MPI program that only starts and ends.
# Used by bench/ga/run.sh (one host) and bench/ga/cross-host.sh (the multi-host bed).
set -eu -o pipefail
cd "$(dirname "$0")/../.."
build=$(cd "$1" && pwd)
out=$2
shift 2
ga_src=${GA_SRC:-../shared/ga}
mkdir -p "$out/logs"
: >"$out/ga-builds.txt"
for kind in "$@"; do
    case $kind in
    odcm) flag=() ;;
    armci-mpi) flag=(--armci-mpi) ;;
    mpi-pr) flag=(--mpi-pr) ;;
    *) echo "bench/ga/prepare.sh: unknown kind $kind" >&2 && exit 2 ;;
    esac
    log=$out/logs/build-ga.$kind.log
    GA_BUILD_ONLY=1 ARMCI_LIB_DIR=$build/armci scripts/build-ga.sh "${flag[@]}" "$ga_src" >"$log" 2>&1 || {
        tail -n 20 "$log" >&2
        echo "bench/ga/prepare.sh: building GA for $kind failed (log $log)" >&2
        exit 1
    }
    dir=$(sed -n 's/^GA_BUILD=//p' "$log")
    echo "$kind $dir" >>"$out/ga-builds.txt"
    cfg=$dir/install/bin/ga-config
    # shellcheck disable=SC2046
    mpicc -O2 -Wall -Wextra $("$cfg" --cppflags) bench/ga/ga_ops.c -o "$out/ga_ops.$kind" \
        $("$cfg" --ldflags) $("$cfg" --libs) $("$cfg" --network_ldflags) \
        $("$cfg" --network_libs) $("$cfg" --flibs)
done
printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' \
    >"$out/launch.c"
mpicc -O2 "$out/launch.c" -o "$out/launch"
