#!/bin/sh
# conn-map.sh RUN_MPI NP PROGRAM: the connection map (ARMCI_CONN_MAP) of a ring job holds exactly
# the ring's cells (each node's successor), and that of an all-to-all job with static connections
# the full matrix. PROGRAM is tests/odcm/test_patterns, which checks its own connection counts.
# Then scripts/conn-map.py draws the ring's map: a PNG and an SVG, the SVG the same when drawn
# twice (python3-matplotlib; a python3 first on PATH without it, as a pyenv, is passed over
# for Debian's).
run_mpi=$1
np=$2
program=$3
here=$(dirname "$0")
map=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$map" "$out"' EXIT
# [ARMCI_CONNECT, the program's pattern, the map's expected pattern]
for run in "ondemand ring ring" "static alltoall static"; do
    set -- $run
    : >"$map"
    if ! ARMCI_CONNECT=$1 ARMCI_CONN_MAP=file:$map "$run_mpi" "$np" "$program" "$2" \
        >/dev/null 2>&1; then
        echo "the $2 job failed with ARMCI_CONNECT=$1"
        exit 1
    fi
    echo "ARMCI_CONNECT=$1, $2:"
    "$here/conn-map-check.py" "$map" "$3" || exit 1
    [ "$2" = ring ] && cp "$map" "$out/ring.json"
done
py=""
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then
        py=$p
        break
    fi
done
if [ -z "$py" ]; then
    echo "no python3 with matplotlib: install python3-matplotlib (scripts/install-deps.sh)"
    exit 1
fi
draw="$here/../../scripts/conn-map.py"
"$py" "$draw" "$out/ring.json" "$out/a" && "$py" "$draw" "$out/ring.json" "$out/b" || exit 1
for f in a.png a.svg; do
    [ -s "$out/$f" ] || { echo "scripts/conn-map.py wrote no $f"; exit 1; }
done
cmp -s "$out/a.svg" "$out/b.svg" || { echo "the SVG differs between two drawings"; exit 1; }
echo "scripts/conn-map.py: PNG and SVG drawn, the SVG the same twice"
