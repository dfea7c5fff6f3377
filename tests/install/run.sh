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
# - the module file (share/modulefiles/armci-odcm/VERSION) loads under
#   Environment Modules and Lmod in clean shells; with it alone, programs built
#   with pkg-config and with CMake run (2 processes, 2 virtual nodes);
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

# The module file, loaded with `module load` under Environment Modules and Lmod, each
# initialised in a clean shell (env -i: nothing of this shell's PKG_CONFIG_PATH or MPI
# settings; PATH as a login has it): the environment it sets, then a C program built with pkg-config
# (no rpath: LD_LIBRARY_PATH finds the library) and a CMake project found through
# CMAKE_PREFIX_PATH alone, each run on 2 processes in 2 virtual nodes.
version=$(pkg-config --modversion armci)
modfile=$prefix/share/modulefiles/armci-odcm/$version
[ -f "$modfile" ] || fail "no module file $modfile (version $version)"
lmod_init=/usr/share/lmod/lmod/init/bash
[ -f "$lmod_init" ] || fail "no Lmod ($lmod_init): package lmod, run scripts/install-deps.sh"
envmod_init=$("$src/tests/install/env-modules.sh") || fail "no Environment Modules (tests/install/env-modules.sh)"
module_test() { # ID TOOL INIT_FILE
    mwork=$work/module-$1
    tool=$2
    shift
    rm -rf "$mwork" && mkdir -p "$mwork/home"
    # The clean shell's script: each step says what failed (module's own errors go to stderr).
    cat >"$mwork/job.sh" <<EOF
set -u
fail() { echo "FAIL (module, $tool): \$*"; exit 1; }
. "$2" || fail "init $2"
type module >/dev/null 2>&1 || fail "the init file defined no module command"
module use "$prefix/share/modulefiles"
module load armci-odcm || fail "module load armci-odcm"
module list 2>&1 | grep -q "armci-odcm/$version" || fail "module list has no armci-odcm/$version"
[ "\$(command -v armci-info)" = "$prefix/bin/armci-info" ] || fail "PATH: armci-info is '\$(command -v armci-info)'"
case :\${MANPATH:-}: in *:$prefix/share/man:*) ;; *) fail "MANPATH '\${MANPATH:-}'" ;; esac
case :\${LD_LIBRARY_PATH:-}: in *:$libdir:*) ;; *) fail "LD_LIBRARY_PATH '\${LD_LIBRARY_PATH:-}'" ;; esac
case :\${CMAKE_PREFIX_PATH:-}: in *:$prefix:*) ;; *) fail "CMAKE_PREFIX_PATH '\${CMAKE_PREFIX_PATH:-}'" ;; esac
[ "\$(pkg-config --variable=libdir armci)" = "$libdir" ] || fail "PKG_CONFIG_PATH '\${PKG_CONFIG_PATH:-}' gives no armci.pc of $prefix"
armci-info >/dev/null || fail "armci-info"
if command -v man >/dev/null; then
    man -w armci | grep -q "^$prefix/share/man/" || fail "MANPATH: man -w armci gives '\$(man -w armci 2>&1)'"
fi
cd "$mwork" || exit 1
cc -o app "$src/tests/install/app.c" \$(pkg-config --cflags --libs armci) || fail "cc with pkg-config"
ldd ./app | grep -q "libarmci.so.0 => $libdir/" || fail "app does not load $libdir/libarmci.so.0"
cmake -S "$src/tests/install/cmake" -B cmake-build >cmake.log 2>&1 && cmake --build cmake-build >>cmake.log 2>&1 ||
    { cat cmake.log; fail "CMake project with find_package(ARMCI) and no -DCMAKE_PREFIX_PATH"; }
for exe in ./app cmake-build/app_cmake; do
    out=\$(ARMCI_NODE_SIZE=1 ARMCI_VERBOSE=0 "$src/tests/run-mpi.sh" 2 \$exe 2>&1) || { echo "\$out"; fail "\$exe on 2 processes"; }
    echo "\$out" | grep -q "install-app: 2 processes, ring of 4096-byte puts verified" &&
        echo "\$out" | grep -q "2 processes on 2 nodes" || { echo "\$out"; fail "\$exe: no verified ring on 2 nodes"; }
done
echo "ok"
EOF
    # A login's PATH (Debian's default for users; bash's own default is not exported,
    # so a module's prepend-path would make PATH its directory alone).
    out=$(env -i HOME="$mwork/home" PATH=/usr/local/bin:/usr/bin:/bin bash --noprofile --norc "$mwork/job.sh" 2>&1)
    printf '%s\n' "$out" | tail -1 | grep -qx ok || { printf '%s\n' "$out"; fail "module load under $tool"; }
    echo "ok: module load armci-odcm under $tool in a clean shell; pkg-config and CMake programs run on 2 nodes"
}
module_test envmodules "Environment Modules" "$envmod_init"
module_test lmod Lmod "$lmod_init"

"$prefix/bin/armci-info" >/dev/null || fail "installed armci-info"
"$prefix/bin/softib-info" --help >/dev/null || fail "installed softib-info"
for page in man1/armci-info.1 man1/softib-info.1 man7/armci.7; do
    [ -f "$prefix/share/man/$page" ] || fail "man page $page not installed"
done
echo "ok: installed armci-info and softib-info run, man pages installed"
echo "PASS: install into $prefix, the README's link line, 2 processes on 2 nodes ($mpi)"
