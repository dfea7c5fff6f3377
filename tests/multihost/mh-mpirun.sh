#!/bin/sh
# mh-mpirun.sh NP PER_HOST PROGRAM [ARGS...]: starts PROGRAM on the test
# cluster's hosts as a user of a real cluster would: mpirun with the hostfile,
# ranks placed PER_HOST to a host in order, started on the other hosts over
# ssh. Nodes come from host names (no ARMCI_NODE_SIZE); the verbs device is
# whatever the runtime finds (rdma_rxe here). Every ARMCI_*/SOFTIB_*/BENCH_*
# variable set here is passed to all ranks (Open MPI forwards none by itself:
# a rank that misses one runs a different program). Open MPI's own traffic stays on TCP over
# eth0 so that the RDMA device carries only ours; TCP keepalive lets mpirun
# notice a host that died within seconds instead of minutes (MH_KEEPALIVE_TIME
# seconds of silence, 10 by default: a link flap longer than that must raise
# it, or mpirun ends the job itself). LD_LIBRARY_PATH, where set, is passed too.
# MH_MPI=ucx puts Open MPI's own traffic and its one-sided windows on UCX over
# rxe0 instead (pml ucx, osc ucx; UCX_* variables passed): for the peers that
# are MPI, bench/ga/cross-host.sh. PER_HOST may exceed a host's CPUs (GA's MPI-PR
# runs a progress rank a host besides the compute ranks): --oversubscribe.
np=$1 per_host=$2
shift 2
[ -n "${MH_HOSTFILE:-}" ] || { echo "mh-mpirun.sh: run inside the test cluster (tests/multihost/cluster.sh)" >&2; exit 2; }
pass=""
for v in $(env | sed -n 's/^\(\(ARMCI\|SOFTIB\|BENCH\|UCX\)_[A-Z0-9_]*\)=.*/\1/p'); do
    pass="$pass -x $v"
done
[ -n "${LD_LIBRARY_PATH:-}" ] && pass="$pass -x LD_LIBRARY_PATH"
net="--mca pml ob1 --mca btl self,vader,tcp --mca osc sm,pt2pt"
if [ "${MH_MPI:-tcp}" = ucx ]; then
    net="--mca pml ucx --mca osc ucx --mca btl ^openib,uct"
    export UCX_NET_DEVICES=${UCX_NET_DEVICES:-rxe0:1}
    pass="$pass -x UCX_NET_DEVICES"
fi
# shellcheck disable=SC2086
exec mpirun --allow-run-as-root --hostfile "$MH_HOSTFILE" -np "$np" --map-by "ppr:$per_host:node" --oversubscribe \
    --bind-to none $net \
    --mca btl_vader_single_copy_mechanism none --mca mpi_yield_when_idle 1 \
    --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
    --mca oob_tcp_keepalive_time "${MH_KEEPALIVE_TIME:-10}" --mca oob_tcp_keepalive_intvl 2 \
    --mca oob_tcp_keepalive_probes 3 \
    $pass "$@"
