#!/bin/sh
# Installs the Debian packages ARMCI-ODCM needs to build, test and benchmark,
# when any is missing: every package named in scripts/deps.txt, the one table
# of program -> package (tests/core/test_deps.py checks it against dpkg and
# against the programs the tree calls). Safe to run again: does nothing then.
set -e
here=$(dirname "$0")
packages=$(sed -e 's/#.*//' "$here/deps.txt" | awk 'NF >= 2 { print $2 }' | sort -u)

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
