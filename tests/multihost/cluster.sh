#!/bin/bash
# cluster.sh: boots a throw-away cluster of N hosts (QEMU VMs, each with its
# own kernel, host name, /tmp, /dev/shm and pid namespace, and an rdma_rxe
# device on a virtio NIC), joined by an Ethernet segment that exists only
# between the QEMU processes (hub.py on a Unix socket in the run's private directory: no bridge, tap or route
# on this machine), with sshd on every host and keys made for this run; then
# runs COMMAND on node1 as a user logged in there would, and stops them all.
#
#   cluster.sh [-n NODES] [-s CPUS] [-m MiB] [-t SECONDS] [-S] [-C DIR]... [-e NAME=VAL]... -- COMMAND...
#
#   -n NODES   hosts (default 2), named node1..nodeN, addresses 10.77.0.11...
#   -s CPUS    virtual CPUs per host (default 2), -m MiB memory (default 1024)
#   -t SECONDS bound on the whole run (default 600); exit 124 when reached
#   -C DIR     a host directory seen read-write at the same path on every
#              host (repeatable; the first is COMMAND's working directory;
#              default: the current directory)
#   -e N=V     environment for COMMAND
#   -S         a Slurm cluster too: munged and slurmd on every host, slurmctld
#              on node1 (a munge key and slurm.conf made for this run), a
#              user `mhuser` (uid 1500) on every host to run jobs as; COMMAND
#              starts when every host is idle in sinfo. Without -S nothing of
#              Slurm runs (and none of its daemons ever runs on this machine).
#
# In COMMAND: $MH_HOSTFILE is an Open MPI hostfile (slots = CPUS per host),
# $MH_NODES the host count, $MH_CONTROL a directory where writing a file
# `poweroff-nodeK` makes the driver power host K off at once (SIGKILL to its
# QEMU: a host that dies), and where it then writes `poweroff-nodeK.done`.
# ssh from node1 to nodeK works without a password (`ssh nodeK CMD`).
# With -S: $SLURM_CONF is the run's slurm.conf (a copy on each host; sinfo,
# srun, sbatch, salloc read it), $MH_SLURM_LOGS the directory of the daemons'
# logs (kept with MH_KEEP=1).
#
# Exit status: COMMAND's; 124 on timeout; 125 when the cluster could not be
# set up (the hosts' consoles are printed): never a silent skip.
# Kernel: the one ../shared/tools/rxe-vm fetches into its cache
# (RXE_VM_CACHE, default /tmp/rxe-vm-cache; fetched on first use); the
# initramfs is cached beside it, keyed by the hash of what goes into it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
RXE_VM=$TOP/../shared/tools/rxe-vm/run-in-vm.sh
CACHE=${RXE_VM_CACHE:-/tmp/rxe-vm-cache}
NODES=2 SMP=2 MEM=1024 TIMEOUT=600 SLURM=0
DIRS=() ENVS=()
msg() { echo "cluster: $*" >&2; }
die() { msg "$*"; exit 125; }

while [ $# -gt 0 ]; do
	case $1 in
	-n) NODES=$2; shift 2 ;;
	-s) SMP=$2; shift 2 ;;
	-m) MEM=$2; shift 2 ;;
	-t) TIMEOUT=$2; shift 2 ;;
	-C) DIRS+=("$(cd "$2" && pwd -P)"); shift 2 ;;
	-e) ENVS+=("$2"); shift 2 ;;
	-S) SLURM=1; shift ;;
	--) shift; break ;;
	-h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (try -h)" ;;
	esac
done
[ $# -gt 0 ] || die "no command (try -h)"
[ ${#DIRS[@]} -gt 0 ] || DIRS=("$(pwd -P)")
[ "$NODES" -ge 1 ] && [ "$NODES" -le 8 ] || die "-n takes 1 to 8 hosts"
# The bed's required programs (their packages: scripts/deps.txt).
"$TOP/scripts/check-programs.sh" qemu-system-x86_64 sshd ssh ssh-keygen python3 cpio modprobe xz ||
	die "the bed cannot start without them"
if [ "$SLURM" = 1 ]; then
	"$TOP/scripts/check-programs.sh" slurmctld slurmd srun munged ||
		die "Slurm cannot start without them"
	[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] ||
		die "Slurm's PMIx plugin is missing: it comes from the package slurm-wlm-basic-plugins, which scripts/install-deps.sh installs"
fi
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	die "a static /bin/busybox is missing: it comes from the package busybox-static, which scripts/install-deps.sh installs"

# ------------------------------------------------------------ guest kernel
if ! { [ -s "$CACHE/kernel-pkg" ] && [ -e "$CACHE/$(cat "$CACHE/kernel-pkg")/.extracted" ]; }; then
	[ -x "$RXE_VM" ] || die "no guest kernel in $CACHE and no $RXE_VM to fetch one"
	msg "fetching the guest kernel with rxe-vm"
	RXE_VM_QUIET=1 "$RXE_VM" -C /tmp --no-rxe true >&2 || die "rxe-vm could not fetch and boot its kernel"
fi
KDIR=$CACHE/$(cat "$CACHE/kernel-pkg")
KROOT=$KDIR/root
KVER=$(ls "$KROOT/lib/modules" | head -1)
KERNEL=$KDIR/vmlinux
[ -s "$KERNEL" ] || KERNEL=$KROOT/boot/vmlinuz-$KVER

# --------------------------------------------------------------- initramfs
MODS_BOOT="virtio_pci 9pnet_virtio 9p"
MODS_NET="virtio_net crc32_generic rdma_rxe sch_netem"
HASH=$( (cat "$HERE/guest-init" /bin/busybox; echo "$KVER/$MODS_BOOT/$MODS_NET") | sha256sum | cut -c1-16)
INITRD=$KDIR/multihost-initramfs-$HASH.cpio.gz
add_mods() { # LIST_FILE MODULE...
	local list=$1 f b; shift
	for m in "$@"; do
		modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
	done | awk '!seen[$0]++' | while read -r f; do
		b=$(basename "$f"); b=${b%.xz}; b=${b%.zst}
		[ -e "$T/lib/modules/$b" ] && continue
		case $f in
		*.xz) xz -dc "$f" > "$T/lib/modules/$b" ;;
		*.zst) zstd -qdc "$f" > "$T/lib/modules/$b" ;;
		*) cp "$f" "$T/lib/modules/$b" ;;
		esac
		echo "$b" >> "$list"
	done
}
if [ ! -f "$INITRD" ]; then
	exec 9>"$CACHE/.multihost.lock"; flock 9
	if [ ! -f "$INITRD" ]; then
		msg "building the initramfs for $KVER"
		T=$(mktemp -d "$CACHE/mh-initramfs.XXXXXX")
		mkdir -p "$T/bin" "$T/lib/modules"
		cp /bin/busybox "$T/bin/busybox"
		install -m 755 "$HERE/guest-init" "$T/init"
		: > "$T/modules.load"; : > "$T/modules-net.load"
		add_mods "$T/modules.load" $MODS_BOOT
		add_mods "$T/modules-net.load" $MODS_NET
		(cd "$T" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRD.tmp" && mv "$INITRD.tmp" "$INITRD"
		rm -rf "$T"
	fi
	exec 9>&-
fi

# ----------------------------------------------------------- this run's files
RUN=$(mktemp -d /tmp/multihost.XXXXXX)
chmod 700 "$RUN"
PIDS=() HUB=
cleanup() {
	for p in ${PIDS[@]+"${PIDS[@]}"} $HUB; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ "${MH_KEEP:-0}" = 1 ] && msg "run directory kept: $RUN" || rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

NET=10.77.0
mkdir -p "$RUN/ssh" "$RUN/control"
ssh-keygen -q -t ed25519 -N '' -C multihost-host -f "$RUN/ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -C multihost-user -f "$RUN/ssh/id"
{
	echo "127.0.0.1 localhost"
	for k in $(seq 1 "$NODES"); do echo "$NET.$((10 + k)) node$k"; done
} > "$RUN/etc-hosts"
for k in $(seq 1 "$NODES"); do echo "node$k slots=$SMP"; done > "$RUN/hostfile"
{
	printf 'MH_NODES=%q\nMH_NET=%q\nMH_SHARES=%q\nMH_SLURM=%q\n' "$NODES" "$NET" "${DIRS[*]}" "$SLURM"
} > "$RUN/config"
if [ "$SLURM" = 1 ]; then
	# Slurm, made for this run: munge's key, slurm.conf (no systemd in the guests:
	# processes tracked by /proc, no task plugin; state, spool and pid files on each
	# host's tmpfs /run; logs here), and a user to run the jobs as.
	mkdir -p "$RUN/slurm/logs"
	chmod 1777 "$RUN/slurm/logs"
	head -c 1024 /dev/urandom > "$RUN/slurm/munge.key"
	cat > "$RUN/slurm/slurm.conf" <<-EOF
	# slurm.conf of a multi-host bed run (tests/multihost/cluster.sh -S)
	ClusterName=multihost
	SlurmctldHost=node1
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	CredType=cred/munge
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	JobCompType=jobcomp/none
	SwitchType=switch/none
	MpiDefault=none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_CPU
	SchedulerType=sched/backfill
	ReturnToService=2
	# the job's ranks get slurmd's locked-memory limit (unlimited), not the submitting shell's
	PropagateResourceLimitsExcept=MEMLOCK
	# a job at its time limit, or a step whose rank died, is SIGKILLed 5 s after SIGTERM
	KillWait=5
	OverTimeLimit=0
	MinJobAge=10
	InactiveLimit=0
	# emulated hosts on a loaded machine answer slowly
	MessageTimeout=60
	SlurmdTimeout=300
	SlurmctldTimeout=300
	StateSaveLocation=/run/mh/slurm/ctld
	SlurmdSpoolDir=/run/mh/slurm/spool
	SlurmctldPidFile=/run/mh/slurm/slurmctld.pid
	SlurmdPidFile=/run/mh/slurm/slurmd.pid
	SlurmctldLogFile=/run/mh/io/slurm/logs/slurmctld.log
	SlurmdLogFile=/run/mh/io/slurm/logs/slurmd-%n.log
	SlurmctldDebug=info
	SlurmdDebug=info
	NodeName=node[1-$NODES] CPUs=$SMP State=UNKNOWN
	PartitionName=hosts Nodes=ALL Default=YES MaxTime=INFINITE State=UP
	EOF
	# slurmd loads a cgroup plugin whatever the others; with no cgroup file system in the
	# guests (and none needed: proctrack/linuxproc, task/none) v1's loads without one.
	echo "CgroupPlugin=cgroup/v1" > "$RUN/slurm/cgroup.conf"
	{ cat /etc/passwd; echo "mhuser:x:1500:1500:multihost job user:/tmp/home-mhuser:/bin/bash"; } > "$RUN/slurm/passwd"
	{ cat /etc/group; echo "mhuser:x:1500:"; } > "$RUN/slurm/group"
fi
install -m 755 "$HERE/guest-stage2.sh" "$RUN/guest-stage2.sh"
{
	printf 'cd -- %q || exit 125\n' "${DIRS[0]}"
	printf 'export MH_HOSTFILE=/run/mh/io/hostfile MH_NODES=%q MH_CONTROL=/run/mh/io/control\n' "$NODES"
	[ "$SLURM" = 1 ] && printf 'export SLURM_CONF=/run/mh/slurm/slurm.conf MH_SLURM_LOGS=/run/mh/io/slurm/logs\n'
	for e in ${ENVS[@]+"${ENVS[@]}"}; do printf 'export %q\n' "$e"; done
	printf 'exec'; printf ' %q' "$@"; printf '\n'
} > "$RUN/cmd.sh"
: > "$RUN/out"; : > "$RUN/err"

# ------------------------------------------------------------------- the hub
# A Unix socket in the run's private directory: the hosts' QEMU connect to it, no one else can.
/usr/bin/python3 "$HERE/hub.py" "$RUN/hub.sock" "$NODES" & HUB=$!
for _ in $(seq 50); do [ -S "$RUN/hub.sock" ] && break; sleep 0.1; done
[ -S "$RUN/hub.sock" ] || die "the hub did not start"

# ------------------------------------------------------------------ the hosts
V9="security_model=none,multidevs=remap"
START=$(date +%s)
for k in $(seq 1 "$NODES"); do
	shares=() i=0
	for d in "${DIRS[@]}"; do shares+=(-virtfs "local,path=$d,mount_tag=share$i,$V9"); i=$((i + 1)); done
	qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu max -m "$MEM" -smp "$SMP" \
		-nodefaults -no-user-config -display none -monitor none -no-reboot \
		-serial "file:$RUN/node$k.console" \
		-netdev "stream,id=net0,server=off,addr.type=unix,addr.path=$RUN/hub.sock" \
		-device "virtio-net-pci,netdev=net0,mac=52:54:00:4d:48:$(printf %02x $((10 + k)))" \
		-kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off no_timer_check 8250.nr_uarts=1 rdinit=/init mh.node=$k" \
		-virtfs "local,path=/,mount_tag=hostroot,readonly=on,$V9" \
		-virtfs "local,path=$KROOT,mount_tag=kroot,readonly=on,$V9" \
		-virtfs "local,path=$RUN,mount_tag=mhio,$V9" \
		"${shares[@]}" </dev/null >"$RUN/node$k.qemu.log" 2>&1 &
	PIDS+=($!)
done

tail -n +1 -f "$RUN/out" & PIDS+=($!)
tail -n +1 -f "$RUN/err" >&2 & PIDS+=($!)

# (no_timer_check above: on a loaded host the emulated CPU is too slow for the kernel's
# IO-APIC timer check, which then panics at boot.)
# Until node1's command ends: carry out power-off requests, notice a host
# that fails to start, bound the time.
consoles() {
	for k in $(seq 1 "$NODES"); do
		msg "---- node$k console (tail) ----"; tail -n 25 "$RUN/node$k.console" >&2 || true
		cat "$RUN/node$k.qemu.log" "$RUN/node$k.log" 2>/dev/null >&2 || true
	done
}
rc=
while :; do
	if [ -s "$RUN/rc" ]; then rc=$(cat "$RUN/rc"); break; fi
	for f in "$RUN"/node*.failed; do
		[ -e "$f" ] && { msg "$(basename "$f" .failed) failed to start: $(cat "$f")"; consoles; exit 125; }
	done
	for req in "$RUN"/control/poweroff-node*; do
		case $req in *.done|*\*) continue ;; esac
		k=${req##*poweroff-node}
		if [ -e "$req.done" ]; then continue; fi
		kill -9 "${PIDS[$((k - 1))]}" 2>/dev/null || true
		date +%s.%N > "$req.done"
		msg "node$k powered off (request from the run)"
	done
	if ! kill -0 "${PIDS[0]}" 2>/dev/null; then
		sleep 1
		[ -s "$RUN/rc" ] && continue
		msg "node1 stopped without a result"; consoles; exit 125
	fi
	if [ $(($(date +%s) - START)) -ge "$TIMEOUT" ]; then
		msg "timeout after ${TIMEOUT}s"; consoles; exit 124
	fi
	sleep 0.2
done
sleep 0.5 # let tail print the last lines
msg "exit $rc after $(($(date +%s) - START)) s on $NODES hosts"
exit "$rc"
