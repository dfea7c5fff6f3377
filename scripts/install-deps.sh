#!/bin/sh
# Installs the Debian packages ARMCI-ODCM needs to build, test and
# benchmark, when any is missing. Safe to run again: does nothing then.
# The last line is what the rxe suite's VM needs (QEMU, a static busybox
# for its initramfs, the tools to build it, rdma-core's utilities).
# m4: GA's build generates tests with it; autoconf, automake, libtool:
# scripts/build-ga.sh runs autoreconf on a GA git checkout.
# clang, libclang-rt-14-dev (libFuzzer and the sanitizer runtimes): scripts/fuzz.sh.
# python3-matplotlib: bench/plot.py (the PNGs bench/run-all.sh writes).
# mpich, libmpich-dev: the second MPI that scripts/run-tests.sh builds and tests
# (-Dmpi=mpich); Open MPI stays the default (update-alternatives is not touched).
set -e
packages="build-essential meson ninja-build pkg-config python3 python3-matplotlib
libibverbs-dev ibverbs-providers
openmpi-bin libopenmpi-dev
mpich libmpich-dev
libarmci-mpi-dev
libglobalarrays-dev libscalapack-openmpi-dev liblapack-dev libblas-dev gfortran
m4 autoconf automake libtool
clang libclang-rt-14-dev
qemu-system-x86 busybox-static cpio kmod xz-utils iproute2 ibverbs-utils"

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
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
