#!/bin/sh
# run-all.sh [BUILD_DIR]: every multi-host case, one cluster boot per set:
# all cases on 2 hosts x 2 ranks and on 4 hosts x 1 rank, then the faults and
# the speed table (1 rank a host) on 2 hosts. With MH_GA_TESTX=PATH (GA's
# global/testing/test.x from scripts/build-ga.sh) the `hosts` sets run it too.
# Prints each set's summary; exit status: the number of sets that failed.
here=$(dirname "$0")
build=${1:-build}
fails=0
for s in "hosts 2" "hosts 4" "faults 2"; do
    set -- $s
    echo "== multihost $1 on $2 hosts"
    "$here/run.sh" "$1" "$2" "$build" || fails=$((fails + 1))
done
echo "multihost: $fails set(s) failed"
exit $fails
