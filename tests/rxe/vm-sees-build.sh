# Sourced by the scripts that run a build inside rxe-vm: vm_sees_build NAME BUILD TOP
# fails with a clear message when the VM cannot see BUILD. The VM shares TOP
# read-write and the rest of the host's / read-only, but replaces /tmp,
# /var/tmp, /run and /dev/shm with its own tmpfs: a build there is invisible.
vm_sees_build() {
    case $(cd "$2" && pwd -P)/ in
    "$3"/*) return 0 ;;
    /tmp/* | /var/tmp/* | /run/* | /dev/shm/*)
        echo "$1: the build directory $2 is under /tmp, /var/tmp, /run or /dev/shm, which the VM replaces with its own empty tmpfs: build inside the project ($3) or anywhere else" >&2
        return 1 ;;
    esac
}
