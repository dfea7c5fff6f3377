#!/bin/bash
# Stage 2 of a test-cluster host: PID 1 after switch_root (the host's bash
# on the read-only root). Starts sshd with this run's keys; node1 then waits
# until every host answers over ssh, runs the command (as a user would, from
# a login on the first host: mpirun --hostfile ... ) and powers off, which
# tells the driver the run is over. The other hosts serve ssh until the
# driver stops them. PID 1 must never exit. With Slurm (cluster.sh -S)
# every host also runs munged and slurmd, node1 slurmctld, and node1 waits
# until every host is idle in sinfo before the command.
node=$1
IO=/run/mh/io
. "$IO/config"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp/home LANG=C.UTF-8 TERM=dumb
log() { echo "multihost node$node: $*" >> "$IO/node$node.log"; }
halt() {
	sync
	echo o > /proc/sysrq-trigger
	while :; do sleep 60; done
}

# sshd: root logs in with this run's key only; keys copied to tmpfs so that
# sshd accepts their modes.
mkdir -p /run/sshd /run/mh/ssh && chmod 700 /run/mh/ssh
cp "$IO/ssh/host_key" "$IO/ssh/id" "$IO/ssh/id.pub" /run/mh/ssh/
chmod 600 /run/mh/ssh/host_key /run/mh/ssh/id
cat > /run/mh/ssh/sshd_config <<EOF
ListenAddress $MH_NET.$((10 + node))
HostKey /run/mh/ssh/host_key
AuthorizedKeysFile /run/mh/ssh/id.pub
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
AcceptEnv ARMCI_* SOFTIB_* OMPI_*
EOF
cat > /run/mh/ssh/config <<EOF
Host *
    IdentityFile /run/mh/ssh/id
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
    BatchMode yes
    ConnectTimeout 30
EOF
# ssh reads ~/.ssh of the home in /etc/passwd (the read-only /root): the
# run's client config goes in place of the system-wide one instead, so a
# plain `ssh nodeK` (and Open MPI's launcher) works as on a cluster.
mount --bind /run/mh/ssh/config /etc/ssh/ssh_config || { log "cannot set the ssh client config"; halt; }
/usr/sbin/sshd -f /run/mh/ssh/sshd_config -E "$IO/node$node.sshd.log" || { log "sshd failed"; halt; }
log "sshd up"

# Slurm (cluster.sh -S): the job user, munged, slurmd on every host and slurmctld on
# node1, with this run's key and slurm.conf. The daemons get an unlimited locked-memory
# limit, as a site's unit files give them (LimitMEMLOCK=infinity), and pass it to the
# jobs (PropagateResourceLimitsExcept=MEMLOCK): the submitting shell's limit stays low.
if [ "${MH_SLURM:-0}" = 1 ]; then
	S=/run/mh/slurm
	mkdir -p $S/ctld $S/spool /run/munge /tmp/home-mhuser
	chown 1500:1500 /tmp/home-mhuser
	cp "$IO/slurm/slurm.conf" "$IO/slurm/cgroup.conf" "$IO/slurm/passwd" "$IO/slurm/group" $S/
	chmod 644 $S/slurm.conf $S/cgroup.conf $S/passwd $S/group
	mount --bind $S/passwd /etc/passwd && mount --bind $S/group /etc/group ||
		{ log "cannot add the job user"; halt; }
	install -m 400 "$IO/slurm/munge.key" /run/munge/munge.key
	munged --force --key-file=/run/munge/munge.key --seed-file=/run/munge/munged.seed \
		--pid-file=/run/munge/munged.pid --log-file="$IO/slurm/logs/munged-node$node.log" ||
		{ log "munged failed"; halt; }
	export SLURM_CONF=$S/slurm.conf
	if [ "$node" = 1 ]; then
		(ulimit -l unlimited && exec slurmctld -f $SLURM_CONF) || { log "slurmctld failed"; halt; }
	fi
	(ulimit -l unlimited && exec slurmd -f $SLURM_CONF -N "node$node") || { log "slurmd failed"; halt; }
	log "munged and slurmd up"
fi
touch "$IO/node$node.ready"

if [ "$node" != 1 ]; then
	while :; do sleep 3600; done
fi

# node1: wait for every host's sshd, then run the command.
for k in $(seq 2 "$MH_NODES"); do
	for try in $(seq 1 120); do
		ssh "node$k" true 2>/dev/null && break
		sleep 1
	done
	ssh "node$k" true || { log "node$k does not answer ssh"; echo 125 > "$IO/rc"; halt; }
done
log "all $MH_NODES hosts answer"
if [ "${MH_SLURM:-0}" = 1 ]; then
	for try in $(seq 1 300); do
		[ "$(sinfo -h -o %t 2>/dev/null | sort -u)" = idle ] && break
		sleep 1
	done
	[ "$(sinfo -h -o %t 2>/dev/null | sort -u)" = idle ] ||
		{ log "Slurm's hosts not idle after 300 s: $(sinfo -h -N -o '%N %t' 2>&1 | tr '\n' ' ')"; echo 125 > "$IO/rc"; halt; }
	log "Slurm: every host idle after $try s"
fi
log "running the command"
/bin/bash "$IO/cmd.sh" </dev/null >"$IO/out" 2>"$IO/err"
echo $? > "$IO/rc"
halt
