#!/bin/bash
# Builds Global Arrays from source against libarmci, the way docs/USER-GUIDE.md tells
# a user to, proves that the GA binaries call THIS libarmci, and runs GA's own
# `make check` across virtual nodes.
#
#   scripts/build-ga.sh GA_SRC [PREFIX]
#   scripts/build-ga.sh --armci-mpi GA_SRC     # the same GA on Debian's ARMCI-MPI
#   scripts/build-ga.sh --mpi-pr GA_SRC        # the same GA on its own MPI progress-rank
#                                              # runtime (GA_BUILD_ONLY only: one extra
#                                              # rank per node serves the others)
#
# GA_SRC: a GA source tree (a release, or a git checkout: then `autoreconf -vif`
# runs, which needs autoconf, automake and libtool), a GA tarball, or a
# directory holding one ga-*.tar.gz (like ../shared/ga).
#
# PREFIX: where libarmci is installed (`meson setup --prefix PREFIX --libdir lib`,
# so that GA's `--with-armci=PREFIX`, which adds -LPREFIX/lib, finds it;
# Meson's default libdir lib/x86_64-linux-gnu is not searched by GA, and the
# link would silently take Debian's static ARMCI-MPI from /usr/lib instead).
# Without PREFIX, libarmci goes into the cache directory (below).
#
# Steps:
#  1. installs libarmci from this source tree into PREFIX (its own Meson build
#     directory, in the cache; ARMCI_INSTALL=0: only checks that PREFIX holds
#     ARMCI-ODCM's library and headers);
#  2. configures GA with --with-armci=PREFIX --enable-f77 --enable-thread-safety MPICC=mpicc
#     MPIF77=mpif77 LDFLAGS=-Wl,-rpath,PREFIX/lib (a RUNPATH: the binaries run
#     without LD_LIBRARY_PATH), builds it, its test programs, and installs it;
#  3. proves the binaries use this libarmci: the configure summary links
#     -LPREFIX/lib -larmci, a test binary NEEDs libarmci.so.0 with PREFIX/lib
#     in its RUNPATH, `ldd` resolves it to the library under test, that file
#     carries ARMCI-ODCM's own strings, and a run with ARMCI_VERBOSE=1 prints
#     "ARMCI-ODCM x.y: libarmci code in <that file>" and a connection report
#     for 2 nodes (Debian's ARMCI-MPI is a static archive: a GA linked
#     against it NEEDs no libarmci at all, and every one of these checks fails);
#  4. runs GA's `make check`: every parallel test on $GA_NPROCS (4) processes
#     in nodes of $GA_NODE_SIZE (2) ranks, so between the 2 virtual nodes all
#     traffic goes through verbs (softib), each test under `timeout`
#     (scripts/ga-mpiexec.sh, $GA_TEST_TIMEOUT seconds). Every test's log must
#     carry the ARMCI-ODCM line too (ARMCI_VERBOSE=1 for all of them).
#
# Cache: the GA build of step 2 is kept in
#   ${GA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/armci-odcm}/ga-<key>
# where <key> hashes the GA sources, include/armci.h and include/message.h
# (GA compiles against them), PREFIX, the MPI compiler wrappers and the
# configure arguments. On a hit only steps 3 and 4 run. GA's binaries link
# libarmci dynamically and GA's Makefiles do not track it, so a cached build
# runs whatever libarmci.so.0 the loader finds:
#  - without ARMCI_LIB_DIR, step 1 has just reinstalled the current libarmci
#    into PREFIX/lib, which the binaries' RUNPATH names;
#  - with ARMCI_LIB_DIR=DIR (the Meson test sets DIR to its build's armci/),
#    LD_LIBRARY_PATH=DIR, which the loader searches before any RUNPATH, so the
#    library of that build is tested and step 1 is skipped on a hit.
# Step 3 checks which file was loaded, either way.
#
# Environment:
#   ARMCI_LIB_DIR         directory of the libarmci.so.0 to test (default PREFIX/lib)
#   ARMCI_SOFTIB_LIBRARY  softib for the runs (default: beside the tested libarmci,
#                         else PREFIX/lib/libsoftib.so.0)
#   ARMCI_INSTALL=0       do not install into PREFIX, only check what is there
#   GA_CACHE_DIR          cache directory (see above)
#   GA_NPROCS=4 GA_NODE_SIZE=2 GA_TEST_TIMEOUT=600 GA_JOBS=nproc
#   GA_TIME_BUDGET=1500   seconds for the whole run (build included; 0: no limit):
#                         tests that would start later are not run and fail the
#                         run (ga-results.sh); the benchmarks among GA's tests run
#                         last
#   GA_TESTS="global/testing/test.x ..."  run only these tests
#   GA_CONFIGURE_ARGS     extra arguments for GA's configure
#   GA_SKIP_MISSING=1     exit 77 (skipped) instead of failing when GA_SRC does not exist
#   GA_LOCK_WAIT=3600     seconds to wait for another run on the same cache entry
#   GA_BUILD_ONLY=1       stop after step 2 and print the build's cache entry as its
#                         last line, "GA_BUILD=<dir>" (bench/ga/run.sh uses it)
# shellcheck disable=SC2015 # "A && B || die" is meant
set -eu -o pipefail
{ # the whole script is read before it runs: editing it meanwhile is harmless

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cache_version=1 # bump to invalidate every cached GA build

# GA's tests that fail over ARMCI-MPI as well as over libarmci (GA or test
# problems, not ARMCI-ODCM's): expected failures, with the reason.
#   (none yet)
xfail_tests=""
# GA's tests not run, with the reason.
#   cache_test.x: a naive O(n^3) local matrix multiply up to n=4096, twice:
#     over 15 minutes of CPU on 2 cores whatever the ARMCI.
#   perfmod.x, perform.x: older copies of perf.x's benchmark (the same GA calls: ga_create,
#     ga_put, ga_get, ga_acc, ga_fill_patch, ga_distribution over 2-D patches), checking
#     nothing perf.x does not; 289 s of the suite's 950 s on 2 cores.
#   perf.x, mir_perf2.x: benchmarks that check no data (they time ga_get/ga_put/ga_acc over
#     patch sizes, mir_perf2.x on mirrored arrays), 193 s and 97 s of the 659 s make check
#     took on 2 cores: their figures belong to bench/ga/run.sh, which runs both. perf2.x
#     (7 s: contiguous and strided NGA_Put/Get/Acc, against ARMCI's perf.x) still runs here.
skip_tests="global/testing/cache_test.x global/testing/perfmod.x global/testing/perform.x"
skip_tests="$skip_tests global/testing/perf.x global/testing/mir_perf2.x"
# GA's benchmarks (they check little): run last, so that a spent time budget
# skips them first.
late_tests="global/testing/perf2.x"
# GA's tests that fail over libarmci only, for a known libarmci bug or limit:
# they run, and their failure is reported as KNOWN but fails no run; when one
# passes, the run says so (then delete it here). Empty this list to make
# them fail the run.
known_tests=""
known() { known_tests="$known_tests global/testing/$1.x"; }
#   (none: GA's threaded tests, thread_perf_contig, thread_perf_strided and
#   threadsafec, pass since libarmci is thread safe under MPI_THREAD_MULTIPLE)

die() {
    echo "build-ga.sh: error: $*" >&2
    exit 1
}
say() { echo "build-ga.sh: $*"; }
elapsed() { echo "$(($(date +%s) - $1))s"; }
# Runs a long step with its output in a log; on failure shows the log's end.
logged() {
    local log=$1
    shift
    if ! "$@" > "$log" 2>&1; then
        echo "build-ga.sh: FAILED: $* (log: $log); its last lines:" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}

mode=odcm
case ${1:-} in
--armci-mpi | --mpi-pr)
    mode=${1#--}
    shift
    ;;
esac
[ "$mode" = mpi-pr ] && [ "${GA_BUILD_ONLY:-0}" != 1 ] &&
    die "--mpi-pr builds only (GA_BUILD_ONLY=1): its runs need one progress rank per node"
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,/^# shellcheck/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit 2
fi
ga_arg=$1
prefix_arg=${2:-}
[ "$mode" != odcm ] && [ -n "$prefix_arg" ] && die "--$mode takes no PREFIX"

# ---- GA sources
ga_src=$ga_arg
if [ -d "$ga_src" ] && [ ! -e "$ga_src/configure" ] && [ ! -e "$ga_src/configure.ac" ]; then
    tarball=$(find "$ga_src" -maxdepth 1 \( -name 'ga-*.tar.gz' -o -name 'ga-*.tgz' \
        -o -name 'ga-*.tar.bz2' -o -name 'ga-*.tar.xz' \) | sort -V | tail -n 1)
    [ -n "$tarball" ] || die "$ga_src is neither a GA source tree nor holds a ga-*.tar.gz"
    ga_src=$tarball
fi
if [ ! -e "$ga_src" ]; then
    if [ "${GA_SKIP_MISSING:-0}" = 1 ]; then
        echo "build-ga.sh: SKIPPED: no Global Arrays sources at $ga_arg;" \
            "the GA-from-source stage did not run"
        exit 77
    fi
    die "no Global Arrays sources at $ga_arg"
fi
ga_src=$(cd "$(dirname "$ga_src")" && pwd)/$(basename "$ga_src")

# ---- tools
for tool in mpicc mpif77 make m4 sha256sum flock timeout readelf ldd nm; do
    command -v "$tool" > /dev/null || die "$tool not found (scripts/install-deps.sh installs what GA needs)"
done
[ "$mode" = odcm ] && ! command -v meson > /dev/null && die "meson not found"

cache=${GA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/armci-odcm}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
jobs=${GA_JOBS:-$(nproc)}
np=${GA_NPROCS:-4}
node_size=${GA_NODE_SIZE:-2}
export GA_TEST_TIMEOUT=${GA_TEST_TIMEOUT:-600}
budget=${GA_TIME_BUDGET:-1500}

prefix=""
if [ "$mode" = odcm ] && [ -n "$prefix_arg" ]; then
    mkdir -p "$prefix_arg"
    prefix=$(cd "$prefix_arg" && pwd)
fi

# ---- cache key
t0=$(date +%s)
if [ -f "$ga_src" ]; then
    src_hash=$(sha256sum < "$ga_src" | cut -c1-64)
else
    src_hash=$(cd "$ga_src" && find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z |
        xargs -0 sha256sum | sha256sum | cut -c1-64)
fi
if [ "$mode" = odcm ]; then
    if [ "${ARMCI_INSTALL:-1}" = 0 ]; then
        [ -n "$prefix" ] || die "ARMCI_INSTALL=0 needs a PREFIX"
        headers="$prefix/include/armci.h $prefix/include/message.h"
    else
        headers="$root/include/armci.h $root/include/message.h"
    fi
    # shellcheck disable=SC2086
    headers_hash=$(cat $headers | sha256sum | cut -c1-64)
else
    headers_hash=system
fi
# --enable-thread-safety: GA's own tables (non-blocking handles) are locked, so its
# threaded tests test the ARMCI under them, not GA's races. GA 5.8.2 compiles that lock
# only when PTHREADS is defined, which its configure does for its own ARMCI networks but
# not for an external ARMCI (--with-armci): without -DPTHREADS two threads share GA's
# non-blocking handles and thread_perf_contig reads stale data or corrupts the heap.
configure_common="--enable-f77 --enable-thread-safety CPPFLAGS=-DPTHREADS MPICC=mpicc MPIF77=mpif77 ${GA_CONFIGURE_ARGS:-}"
key=$({
    echo "v$cache_version $mode $src_hash $headers_hash prefix=${prefix:-cache}"
    echo "$configure_common"
    mpicc -show 2> /dev/null || mpicc --showme 2> /dev/null || true
    mpif77 -show 2> /dev/null || mpif77 --showme 2> /dev/null || true
    mpicc --version 2> /dev/null | head -n 1
} | sha256sum | cut -c1-16)
gadir=$cache/ga-$key
[ "$mode" = odcm ] && [ -z "$prefix" ] && prefix=$gadir/armci
say "GA sources $ga_src; cache entry $gadir (mode $mode)"

# One run at a time per cache entry (GA's make check writes into its build tree).
mkdir -p "$gadir"
exec 9> "$gadir.lock"
if ! flock -n 9; then
    say "waiting for another run on $gadir"
    flock -w "${GA_LOCK_WAIT:-3600}" 9 || die "timed out waiting for the lock on $gadir"
fi
touch "$gadir/last-used"
# Entries unused for 30 days go (each is a few hundred MB).
find "$cache" -maxdepth 2 -path "$cache/ga-*/last-used" -mtime +30 2> /dev/null |
    while read -r stale; do
        d=$(dirname "$stale")
        if flock -n "$d.lock" true; then rm -rf "$d" "$d.lock"; fi
    done

hit=no
[ -f "$gadir/build.ok" ] && hit=yes
say "cache $([ $hit = yes ] && echo hit || echo miss)"

# ---- 1. libarmci in PREFIX
is_armci_odcm_lib() { # FILE: exports ARMCI_Init and carries ARMCI-ODCM's own strings
    local syms
    syms=$(nm -D --defined-only "$1" 2> /dev/null) || return 1
    grep -qw ARMCI_Init <<< "$syms" &&
        grep -aq 'ARMCI-ODCM %d.%d: libarmci code in' "$1" &&
        grep -aq 'ARMCI_SOFTIB_LIBRARY' "$1"
}
check_prefix() {
    [ -f "$prefix/include/armci.h" ] && grep -q ARMCI_ODCM_VERSION_MAJOR "$prefix/include/armci.h" ||
        die "$prefix/include/armci.h is missing or not ARMCI-ODCM's"
    [ -f "$prefix/include/message.h" ] || die "$prefix/include/message.h is missing"
    [ -e "$prefix/lib/libarmci.so" ] ||
        die "no $prefix/lib/libarmci.so: install with meson setup --prefix $prefix --libdir lib" \
            "(GA looks in PREFIX/lib only)"
    is_armci_odcm_lib "$prefix/lib/libarmci.so" || die "$prefix/lib/libarmci.so is not ARMCI-ODCM's"
}
if [ "$mode" = odcm ]; then
    if [ "${ARMCI_INSTALL:-1}" = 0 ]; then
        say "checking libarmci in $prefix (ARMCI_INSTALL=0)"
    elif [ $hit = yes ] && [ -n "${ARMCI_LIB_DIR:-}" ]; then
        say "not installing into $prefix: cache hit, the tests use ARMCI_LIB_DIR=$ARMCI_LIB_DIR"
    else
        t=$(date +%s)
        abuild=${ARMCI_GA_BUILD_DIR:-$cache/armci-build-$(printf '%s\n%s' "$root" "$prefix" | sha256sum | cut -c1-12)}
        say "installing libarmci into $prefix (Meson build dir $abuild, libdir=lib)"
        (
            flock -w 1800 8 || die "timed out waiting for $abuild"
            if [ ! -f "$abuild/build.ninja" ]; then
                rm -rf "$abuild"
                logged "$cache/armci-setup.$key.log" meson setup "$abuild" "$root" --prefix "$prefix" \
                    --libdir lib --buildtype release -Dtests=false -Dbench=false
            fi
            logged "$abuild/ga-build.log" ninja -C "$abuild"
            logged "$abuild/ga-install.log" meson install -C "$abuild" --no-rebuild
        ) 8> "$abuild.lock"
        say "libarmci installed in $(elapsed "$t")"
    fi
    if [ "${ARMCI_INSTALL:-1}" = 0 ] || [ $hit = no ] || [ -z "${ARMCI_LIB_DIR:-}" ]; then
        check_prefix
    fi
fi

# ---- 2. GA
if [ $hit = no ]; then
    t=$(date +%s)
    rm -rf "$gadir/src" "$gadir/build" "$gadir/install"
    mkdir -p "$gadir/src" "$gadir/build"
    if [ -f "$ga_src" ]; then
        tar -xf "$ga_src" -C "$gadir/src" --strip-components=1
    else
        tar -C "$ga_src" --exclude=./.git -cf - . | tar -C "$gadir/src" -xf -
    fi
    if [ ! -x "$gadir/src/configure" ]; then
        # A git checkout: GA's autogen.sh downloads its own autotools; the
        # distribution's (autoconf, automake, libtool) do as well.
        command -v libtoolize > /dev/null || die "libtoolize not found: apt-get install libtool"
        say "no configure in the GA sources: autoreconf -vif"
        logged "$gadir/autoreconf.log" sh -c "cd '$gadir/src' && autoreconf -vif"
    fi
    if [ "$mode" = odcm ]; then
        with_armci="--with-armci=$prefix"
        ldflags="-Wl,-rpath,$prefix/lib -Wl,--enable-new-dtags"
    elif [ "$mode" = armci-mpi ]; then
        with_armci="--with-armci" # the system's: Debian's libarmci-mpi-dev
        ldflags=""
    else
        with_armci="--with-mpi-pr" # GA's own runtime: no ARMCI library at all
        ldflags=""
    fi
    say "configuring GA: configure --prefix=$gadir/install $with_armci $configure_common LDFLAGS=\"$ldflags\""
    # shellcheck disable=SC2086
    logged "$gadir/configure.log" sh -c "cd '$gadir/build' && exec ../src/configure \
        --prefix='$gadir/install' '$with_armci' $configure_common LDFLAGS='$ldflags'"
    if [ "$mode" = odcm ]; then
        grep -q "ARMCI_NETWORK_LDFLAGS= *-L$prefix/lib\$" "$gadir/configure.log" &&
            grep -q "ARMCI_NETWORK_LIBS= *-larmci\$" "$gadir/configure.log" ||
            die "GA's configure did not take -L$prefix/lib -larmci (see $gadir/configure.log)"
    fi
    say "configured in $(elapsed "$t"); building GA and its tests (make -j$jobs)"
    logged "$gadir/make.log" make -C "$gadir/build" -j"$jobs"
    logged "$gadir/make-check-programs.log" make -C "$gadir/build" -j"$jobs" check TESTS=
    logged "$gadir/make-install.log" make -C "$gadir/build" install
    {
        echo "GA sources: $ga_src ($src_hash)"
        echo "mode: $mode; libarmci prefix: ${prefix:-system}"
        echo "built: $(date -u +%FT%TZ) in $(elapsed "$t")"
    } > "$gadir/build.ok"
    say "GA built in $(elapsed "$t"), installed in $gadir/install"
fi
build=$gadir/build
if [ "${GA_BUILD_ONLY:-0}" = 1 ]; then
    echo "GA_BUILD=$gadir"
    exit 0
fi

# ---- 3. which ARMCI do GA's binaries call?
probe=$build/global/testing/testc.x
[ -x "$probe" ] || die "$probe was not built"
export ARMCI_CONN_REPORT=0
if [ "$mode" = odcm ]; then
    libdir=${ARMCI_LIB_DIR:-$prefix/lib}
    libdir=$(cd "$libdir" && pwd)
    lib=$libdir/libarmci.so.0
    [ -e "$lib" ] || die "no $lib"
    is_armci_odcm_lib "$lib" || die "$lib is not ARMCI-ODCM's"
    if [ -n "${ARMCI_LIB_DIR:-}" ]; then
        export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
    if [ -z "${ARMCI_SOFTIB_LIBRARY:-}" ]; then
        ARMCI_SOFTIB_LIBRARY=$libdir/libsoftib.so.0
        [ -e "$ARMCI_SOFTIB_LIBRARY" ] || ARMCI_SOFTIB_LIBRARY=$prefix/lib/libsoftib.so.0
    fi
    [ -e "$ARMCI_SOFTIB_LIBRARY" ] || die "no softib library at $ARMCI_SOFTIB_LIBRARY"
    export ARMCI_SOFTIB_LIBRARY ARMCI_NODE_SIZE=$node_size

    dyn=$(readelf -d "$probe")
    grep -q 'NEEDED.*\[libarmci\.so\.0\]' <<< "$dyn" ||
        die "$probe does not NEED libarmci.so.0: GA linked another ARMCI (Debian's static ARMCI-MPI?)"
    grep -E 'RUNPATH|RPATH' <<< "$dyn" | grep -q "$prefix/lib" ||
        die "$probe has no RUNPATH with $prefix/lib"
    loaded=$(ldd "$probe" | awk '$1 ~ /^libarmci\.so/ { print $3 }')
    [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$lib")" ] ||
        die "ldd $probe resolves libarmci.so.0 to '${loaded:-nothing}', not $lib"
    say "ldd: $(basename "$probe") -> $loaded (RUNPATH $prefix/lib${ARMCI_LIB_DIR:+, LD_LIBRARY_PATH $libdir})"
    out=$(ARMCI_VERBOSE=1 ARMCI_CONN_REPORT=1 "$here/ga-mpiexec.sh" "$np" "$probe" 2>&1) ||
        {
            echo "$out" | tail -n 30
            die "$probe failed on $np processes"
        }
    line=$(grep -m 1 'ARMCI-ODCM [0-9.]*: libarmci code in' <<< "$out" || true)
    [ -n "$line" ] || die "a run of $probe with ARMCI_VERBOSE=1 does not print ARMCI-ODCM's init line"
    ran=${line##*libarmci code in }
    [ "$(readlink -f "$ran")" = "$(readlink -f "$lib")" ] || die "$probe ran libarmci code in $ran, not $lib"
    grep -q "$np processes on $((np / node_size)) nodes" <<< "$out" ||
        die "$probe did not run on $((np / node_size)) virtual nodes"
    say "run: ${line#*] }"
    say "run: $(grep -m 1 'connection report' <<< "$out" || true)"
else
    dyn=$(readelf -d "$probe")
    if grep -q 'NEEDED.*libarmci' <<< "$dyn"; then
        die "$probe NEEDs a shared libarmci; expected Debian's static ARMCI-MPI"
    fi
    syms=$(nm "$probe")
    grep -qE ' [TW] ARMCI_Init$' <<< "$syms" || die "$probe does not contain ARMCI_Init"
    unset ARMCI_NODE_SIZE ARMCI_SOFTIB_LIBRARY
    say "$(basename "$probe") holds ARMCI-MPI (static, from $(readlink -f /usr/lib/x86_64-linux-gnu/libarmci.a 2> /dev/null || echo the system))"
fi

# ---- 4. GA's make check
# GA's tests (TESTS = SERIAL_TESTS + PARALLEL_TESTS of GA's Makefile), less
# $skip_tests, with GA's own expected failures plus $xfail_tests. GA's
# LOG_COMPILER (MPIEXEC with %NP%) does not work with the test harness of the
# automake that generated its Makefiles: ga-mpiexec.sh --ga-test stands in
# for it (see there).
t=$(date +%s)
find "$build" -name '*.trs' -delete
rm -f "$build/test-suite.log" "$gadir/timings"
export GA_TIMING_FILE=$gadir/timings GA_NPROCS=$np
[ "$budget" -gt 0 ] && export GA_DEADLINE=$((t0 + budget))
[ "$mode" = odcm ] && export ARMCI_VERBOSE=1 # every log names the library file
if [ -n "${GA_TESTS:-}" ]; then
    tests=$GA_TESTS
else
    tests="\$(filter-out $skip_tests $late_tests,\$(SERIAL_TESTS) \$(PARALLEL_TESTS))"
    tests="$tests \$(filter $late_tests,\$(SERIAL_TESTS) \$(PARALLEL_TESTS))"
fi
say "make check: NPROCS=$np${ARMCI_NODE_SIZE:+ ARMCI_NODE_SIZE=$ARMCI_NODE_SIZE}, ${GA_TEST_TIMEOUT}s per test${GA_DEADLINE:+, $((GA_DEADLINE - $(date +%s)))s left of the time budget}${GA_TESTS:+, TESTS=$GA_TESTS}"
[ -z "${GA_TESTS:-}" ] && say "not run: $skip_tests"
set +e
make -C "$build" check NPROCS="$np" TESTS="$tests" \
    LOG_COMPILER="env GA_SERIAL_TESTS=\"\$(SERIAL_TESTS)\" $here/ga-mpiexec.sh --ga-test" \
    XFAIL_TESTS="\$(SERIAL_TESTS_XFAIL) \$(PARALLEL_TESTS_XFAIL) $xfail_tests" \
    > "$gadir/make-check.log" 2>&1
status=$?
set -e
unset ARMCI_VERBOSE

if ! [ -f "$build/test-suite.log" ]; then
    echo "build-ga.sh: make check ran no test (exit status $status); the end of its log:"
    tail -n 30 "$gadir/make-check.log"
fi
say "make check took $(elapsed "$t") (whole run $(elapsed "$t0")); logs in $build"
# The results and the verdict: ga-results.sh (a test skipped for the time budget fails the run).
export GA_KNOWN_TESTS=$known_tests GA_TIME_BUDGET=$budget GA_MAKE_STATUS=$status
exec "$here/ga-results.sh" "$build" "$mode" "$gadir/timings"
}
