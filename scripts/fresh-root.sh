#!/bin/bash
# Runs the README's two commands on a fresh Debian 12 machine of CI's kind, on any machine:
# a clean Debian 12 root made by debootstrap (minbase: no compiler, no MPI, nothing of the
# project's), a clone of this repository's HEAD at /work/main inside it, ../shared bound
# read-only at /work/shared beside it, as CI lays them out. In that root, as root:
#   1. scripts/quickstart.sh must end with the connection report, and afterwards no test
#      bed's package may be installed (Slurm, munge, QEMU, an ssh server, Lmod, perftest);
#   2. scripts/run-tests.sh must pass (the whole test command: no GA build or VM image is
#      cached in the root), unless --quickstart-only; with --setup-only, only its set-up
#      (install-deps.sh --tests, build.sh --tests: every package of the test set installs and
#      configures in a fresh root, and the quick start's build is configured again).
#
#   scripts/fresh-root.sh [--quickstart-only | --setup-only] [--keep]
#
# Needs root (chroot and mounts) and Debian's package mirror (the one this machine's apt
# uses). The bare root of debootstrap is cached, keyed by the suite, the variant and the
# mirror, in ${XDG_CACHE_HOME:-~/.cache}/armci-odcm/fresh-root/: it holds nothing this project
# installs, so a cached one is as fresh as a new one. The root of a run goes under
# ${FRESH_ROOT_DIR:-/var/tmp} and is removed at the end (--keep: left there, unmounted).
# Prints each command's verdict and time, and `fresh-root: N passed, M failed` last.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
quick_only=no keep=no
for arg in "$@"; do
    case $arg in
    --quickstart-only) quick_only=yes ;;
    --setup-only) quick_only=setup ;;
    --keep) keep=yes ;;
    *) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
die() { echo "fresh-root: error: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "needs root (chroot, mounts)"
"$here/check-programs.sh" debootstrap git || die "scripts/install-deps.sh --tests installs debootstrap"
[ -d "$top/../shared" ] || die "no ../shared beside the project (CI has it there)"

suite=bookworm
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
[ -n "$mirror" ] || mirror=$(awk '/^deb / { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || die "cannot tell this machine's Debian mirror from /etc/apt"

# ---- the bare root (cached)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/armci-odcm/fresh-root
mkdir -p "$cache"
key=$(echo "$suite minbase $mirror" | sha256sum | cut -c1-12)
base=$cache/$suite-minbase-$key.tar
if [ ! -f "$base" ]; then
    t=$SECONDS
    tmp=$(mktemp -d "${FRESH_ROOT_DIR:-/var/tmp}/fresh-base.XXXXXX")
    echo "fresh-root: debootstrap --variant=minbase $suite from $mirror"
    debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
        { tail -n 20 "$cache/debootstrap.log"; rm -rf "$tmp"; die "debootstrap failed"; }
    rm -rf "$tmp/var/cache/apt/archives/"*.deb
    tar -C "$tmp" -cf "$base.part" . && mv "$base.part" "$base"
    rm -rf "$tmp"
    echo "fresh-root: bare root made in $((SECONDS - t)) s (cached: $base)"
fi

# ---- this run's root
root=$(mktemp -d "${FRESH_ROOT_DIR:-/var/tmp}/fresh-root.XXXXXX")
chmod 755 "$root" # mktemp's 700 would keep every other user of the root out of / (munge's
                  # postinst runs as munge: "su: failed to execute /bin/sh: Permission denied")
mounts=()
cleanup() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null; done
    if [ $keep = yes ]; then echo "fresh-root: kept $root"; else rm -rf "$root"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mount_in() { # mount ARGS... TARGET
    mount "$@" || die "mount $* failed"
    mounts+=("${!#}")
}
tar -C "$root" -xf "$base" || die "cannot unpack $base"
chmod 755 "$root" # again: the archive's "." came from debootstrap's mktemp, mode 700
# The apt sources of this machine (the same mirror and security suite), and its resolver.
rm -f "$root/etc/apt/sources.list"
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null ||
    cp /etc/apt/sources.list "$root/etc/apt/sources.list"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# What the installer (or a cloud image) writes on every real machine and debootstrap does not:
# a host name and /etc/hosts (the multi-host VMs bind their cluster's hosts file over it).
[ -e "$root/etc/hostname" ] || echo fresh-root >"$root/etc/hostname"
[ -e "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n127.0.1.1\tfresh-root\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
# The project as CI has it: a clone of the committed HEAD, ../shared beside it, read-only.
mkdir -p "$root/work/main" "$root/work/shared"
git clone -q "$top" "$root/work/main" || die "git clone of $top failed"
mount_in --bind "$top/../shared" "$root/work/shared"
mount --make-private "$root/work/shared"
mount -o remount,bind,ro "$root/work/shared" || die "cannot make /work/shared read-only"
mount_in -t proc proc "$root/proc"
mount_in -t sysfs sysfs "$root/sys"
mount_in --rbind /dev "$root/dev"
mount --make-rslave "$root/dev" # nothing mounted below it in the root reaches this machine's /dev
mount_in -t tmpfs -o mode=1777,size=8g tmpfs "$root/dev/shm"
mount_in -t tmpfs -o mode=1777 tmpfs "$root/tmp"

in_root() { # CMD: runs CMD (a shell line) in the root, in /work/main, with a clean environment
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/sh -c "cd /work/main && $1"
}
passed=0 failed=0
verdict() { # NAME SECONDS WHY
    if [ -z "$3" ]; then
        echo "ok   $1 ($2 s)"; passed=$((passed + 1))
    else
        echo "FAIL $1: $3 ($2 s)"; failed=$((failed + 1))
    fi
}

# ---- 1. the quick start
log=$root/quickstart.log
t=$SECONDS
echo "fresh-root: scripts/quickstart.sh in $root (log: quickstart.log there)"
in_root scripts/quickstart.sh >"$log" 2>&1
rc=$?
why=""
[ $rc -eq 0 ] || why="exit $rc"
grep -q "connection report" "$log" || why="${why:+$why; }no connection report"
grep -q "check=PASS" "$log" || why="${why:+$why; }no check=PASS from LU"
[ -z "$why" ] || tail -n 30 "$log"
verdict quickstart $((SECONDS - t)) "$why"
# What the first command installed: the build-and-run set, no test bed.
beds=$(in_root "dpkg-query -W -f='\${Package} \${Status}\n' slurmd slurmctld slurm-client munge \
    qemu-system-x86 openssh-server lmod perftest libglobalarrays-dev mpich 2>/dev/null" |
    awk '/install ok installed/ { print $1 }' | tr '\n' ' ')
verdict quickstart-installs-no-test-bed 0 "${beds:+installed: $beds}"

# ---- 2. the test command (or its set-up)
if [ $quick_only = setup ]; then
    log=$root/setup.log
    t=$SECONDS
    in_root "scripts/install-deps.sh --tests && scripts/build.sh --tests" >"$log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || tail -n 30 "$log"
    verdict test-setup $((SECONDS - t)) "$([ $rc -eq 0 ] || echo "exit $rc")"
fi
if [ $quick_only = no ]; then
    log=$root/run-tests.log
    t=$SECONDS
    echo "fresh-root: scripts/run-tests.sh in $root (log: run-tests.log there)"
    in_root scripts/run-tests.sh >"$log" 2>&1
    rc=$?
    grep -E "^==== |^stages:|time-budget: FAIL|^run-tests:" "$log"
    verdict run-tests $((SECONDS - t)) "$([ $rc -eq 0 ] || echo "exit $rc")"
    [ $keep = yes ] || cp "$log" "${FRESH_ROOT_LOG:-/var/tmp/fresh-root-run-tests.log}"
fi
echo "fresh-root: $passed passed, $failed failed"
[ $failed -eq 0 ]
