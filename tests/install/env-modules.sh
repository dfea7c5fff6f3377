#!/bin/sh
# env-modules.sh [CACHE_DIR]: prints the path of Environment Modules' bash
# init file, for a test that loads a module file with it. Debian's lmod and
# environment-modules conflict (one of them per machine): scripts/deps.txt
# installs lmod, and this unpacks Debian's environment-modules package into
# CACHE_DIR (default /tmp/env-modules-cache; apt-get download on first use)
# with its paths moved there. It is the packaged modulecmd.tcl and init file,
# run by the system's tclsh (package tcl8.6).
set -eu
cache=${1:-${ENV_MODULES_CACHE:-/tmp/env-modules-cache}}
root=$cache/root
init=$root/usr/share/modules/init/bash
if [ ! -e "$root/.relocated" ]; then
    command -v tclsh8.6 >/dev/null ||
        { echo "env-modules.sh: tclsh8.6 is missing (package tcl8.6): run scripts/install-deps.sh" >&2; exit 2; }
    mkdir -p "$cache"
    exec 9>"$cache/.lock"
    flock 9
    if [ ! -e "$root/.relocated" ]; then
        rm -rf "$root" "$cache"/*.deb
        (cd "$cache" && apt-get download -q environment-modules >&2) ||
            { echo "env-modules.sh: apt-get download environment-modules failed (no package index or network?)" >&2; exit 2; }
        dpkg-deb -x "$cache"/environment-modules_*.deb "$root"
        multiarch=$(ls -d "$root"/usr/lib/*/modulecmd.tcl | sed 's|.*/usr/lib/\([^/]*\)/modulecmd.tcl|\1|')
        for f in "$root/usr/lib/$multiarch/modulecmd.tcl" "$init"; do
            sed -i -e "s|/usr/share/modules|$root/usr/share/modules|g" \
                -e "s|/etc/environment-modules|$root/etc/environment-modules|g" \
                -e "s|/usr/lib/$multiarch/|$root/usr/lib/$multiarch/|g" "$f"
        done
        touch "$root/.relocated"
    fi
fi
echo "$init"
