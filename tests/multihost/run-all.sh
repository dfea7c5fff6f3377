#!/bin/sh
# run-all.sh [BUILD_DIR]: every multi-host case, one cluster boot per set:
# all cases on 2 hosts x 2 ranks and on 4 hosts x 1 rank, the faults on 2
# hosts, the speed table on 2 hosts x 1 rank. With MH_GA_TESTX=PATH (GA's
# global/testing/test.x from scripts/build-ga.sh) the `hosts` sets run it too.
# Prints each set's summary; exit status: the number of sets that failed.
here=$(dirname "$0")
build=${1:-build}
fails=0
for s in "hosts 2" "hosts 4" "faults 2" "speed 2"; do
    set -- $s
    echo "== multihost $1 on $2 hosts"
    if [ "$1" = speed ]; then
        MH_PER_HOST=1 "$here/run.sh" "$1" "$2" "$build" || fails=$((fails + 1))
    else
        "$here/run.sh" "$1" "$2" "$build" || fails=$((fails + 1))
    fi
done
echo "multihost: $fails set(s) failed"
exit $fails
