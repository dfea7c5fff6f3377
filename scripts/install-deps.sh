#!/bin/sh
# Installs the Debian packages ARMCI-ODCM needs, when any is missing, from
# scripts/deps.txt, the one table of program -> package (tests/core/test_deps.py
# checks it against dpkg and against the programs the tree calls):
#   install-deps.sh          the `run` set: build the library and run the main job
#                            (the quick start's first command)
#   install-deps.sh --tests  both sets: also what the tests, the benchmarks and the
#                            test beds need (GA, the peers, QEMU, Slurm, ...)
#   install-deps.sh --list [--tests]  prints the packages of the set(s), installs nothing
# Safe to run again: does nothing then.
set -e
here=$(dirname "$0")
sets=run list=no
for arg in "$@"; do
    case $arg in
    --tests) sets="run tests" ;;
    --list) list=yes ;;
    *) echo "usage: install-deps.sh [--tests] [--list]" >&2; exit 2 ;;
    esac
done
# Rows of the wanted sets: a "#= SET" line starts a set; other comments are dropped.
packages=$(awk -v sets=" $sets " '
    /^#= / { on = index(sets, " " $2 " ") > 0; next }
    { sub(/#.*/, "") }
    on && NF >= 2 { print $2 }' "$here/deps.txt" | sort -u)
if [ $list = yes ]; then
    echo "$packages"
    exit 0
fi

missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "installing:$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive
# Daemons in these packages (sshd; the bed runs its own inside each VM) must
# not start on this machine: policy-rc.d's 101 tells their postinst so.
policy=/usr/sbin/policy-rc.d
if [ ! -e $policy ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee $policy >/dev/null
    $sudo chmod 755 $policy
    trap '$sudo rm -f $policy' EXIT
fi
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
