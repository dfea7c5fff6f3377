#!/bin/sh
# Installs ARMCI-ODCM into a fresh prefix and uses it as a user would,
# with nothing on LD_LIBRARY_PATH (meson suite `install`):
#   run.sh SOURCE_DIR WORK_DIR MPI(openmpi|mpich)
# - configures WORK_DIR/build with --prefix=WORK_DIR/prefix (library, tools
#   and applications only), builds and installs it;
# - every installed program carries a RUNPATH to the installed library dir;
# - builds tests/install/app.c with the README's link line and runs it, and
#   the installed lu, on 2 processes in 2 virtual nodes (ARMCI_NODE_SIZE=1),
#   with the launcher of the MPI built for (tests/run-mpi.sh);
# - a Fortran program through Debian's GA (Open MPI) links and runs the same way;
# - a CMake project finds it with find_package(ARMCI) (tests/install/cmake);
# - the installed armci-info and softib-info start, man pages are installed.
set -u
src=$(cd "$1" && pwd)
work=$2
mpi=$3
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
build=$work/build
fail() {
    echo "FAIL: $*"
    exit 1
}
unset LD_LIBRARY_PATH ARMCI_SOFTIB_LIBRARY
export ARMCI_VERBOSE=0

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$src" --prefix="$prefix" -Dmpi="$mpi" -Dtests=false -Dbench=false \
        >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; fail "meson setup"; }
fi
ninja -C "$build" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "build"; }
rm -rf "$prefix"
meson install -C "$build" --quiet >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "install"; }

pc=$(find "$prefix" -name armci.pc | head -1)
[ -n "$pc" ] || fail "no armci.pc under $prefix"
PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
libdir=$(pkg-config --variable=libdir armci)
case $mpi in
mpich) want=mpich ;;
*) want=ompi-c ;;
esac
pkg-config --print-requires armci | grep -qx "$want" ||
    fail "armci.pc requires '$(pkg-config --print-requires armci | tr '\n' ' ')', not $want"

for exe in lu lj randomaccess armci-info softib-info; do
    runpath=$(readelf -d "$prefix/bin/$exe" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    [ "$runpath" = "$libdir" ] || fail "$exe: RUNPATH '$runpath', expected $libdir"
done
echo "ok: installed programs have RUNPATH $libdir; armci.pc requires $want"

# The README's link line, word for word (unquoted, as users type it).
cd "$work" || exit 1
# shellcheck disable=SC2046
cc -o app "$src/tests/install/app.c" $(pkg-config --cflags --libs armci) \
    -Wl,-rpath,$(pkg-config --variable=libdir armci) || fail "cc with the README's link line"
ldd ./app | grep -q "libarmci.so.0 => $libdir/" || fail "app does not load $libdir/libarmci.so.0"

run() { # EXPECTED_TEXT NP PROGRAM ARGS...
    text=$1
    shift
    out=$(ARMCI_NODE_SIZE=1 "$src/tests/run-mpi.sh" "$@" 2>&1)
    status=$?
    printf '%s\n' "$out" | grep -qF -- "$text" && [ $status -eq 0 ] || {
        printf '%s\n' "$out"
        fail "$* (exit $status), expected '$text'"
    }
    echo "ok: $* -> $(printf '%s\n' "$out" | grep -F -- "$text" | head -1)"
}
run "install-app: 2 processes, ring of 4096-byte puts verified" 2 ./app
run "2 processes on 2 nodes" 2 ./app
run "check=PASS" 2 "$prefix/bin/lu" -n 96 -b 16
# A Fortran program through Debian's GA (built for Open MPI only here), with
# the README's GA link line plus the rpath.
gafort=/usr/lib/x86_64-linux-gnu/libga-$mpi.a
if [ "$mpi" = openmpi ] && [ -f "$gafort" ] && command -v mpif90.openmpi >/dev/null; then
    # shellcheck disable=SC2046
    mpif90.openmpi -fdefault-integer-8 -o ga_app "$src/tests/install/ga_app.F90" \
        -lga-openmpi $(pkg-config --libs armci) -lscalapack-openmpi -llapack -lblas -lm \
        -Wl,-rpath,$(pkg-config --variable=libdir armci) || fail "mpif90 with the README's GA link line"
    run "install-ga-fortran: 2 processes, global array verified" 2 ./ga_app
else
    echo "skip: no GA for $mpi or no mpif90.openmpi, the Fortran GA program not tried"
fi

# find_package(ARMCI) in a CMake project (when cmake is installed).
if command -v cmake >/dev/null; then
    rm -rf "$work/cmake-build"
    cmake -S "$src/tests/install/cmake" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
        >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake-build" >>"$work/cmake.log" 2>&1 ||
        { cat "$work/cmake.log"; fail "CMake project with find_package(ARMCI)"; }
    run "install-app: 2 processes, ring of 4096-byte puts verified" 2 "$work/cmake-build/app_cmake"
else
    echo "skip: no cmake, find_package(ARMCI) not tried"
fi
"$prefix/bin/armci-info" >/dev/null || fail "installed armci-info"
"$prefix/bin/softib-info" --help >/dev/null || fail "installed softib-info"
for page in man1/armci-info.1 man1/softib-info.1 man7/armci.7; do
    [ -f "$prefix/share/man/$page" ] || fail "man page $page not installed"
done
echo "ok: installed armci-info and softib-info run, man pages installed"
echo "PASS: install into $prefix, the README's link line, 2 processes on 2 nodes ($mpi)"
