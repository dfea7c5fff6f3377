#!/bin/bash
# cases.sh SET BUILD_DIR: the multi-host cases, run on node1 of the test
# cluster (cluster.sh runs it there). Every case is a real MPI job over the
# cluster's hosts (tests/multihost/mh-mpirun.sh), and passes only when
#   - it exits 0 within its time and prints its own PASS (apps: check=PASS;
#     every program checks its data byte for byte, apps against references);
#   - every rank says it uses rdma-core's device rxe0 (never softib), known as a
#     software device (priced so by the route cost model), and
#     every rank counts as many nodes as the job has hosts (nodes come from
#     host names: no ARMCI_NODE_SIZE is set here);
#   - the connection report, where printed, counts hosts as nodes.
# After the cases, no host holds an ARMCI or softib name in /dev/shm.
#
# SET: ci (2 hosts: one application, test_rma and test_msg on demand, test_rma over the
# hybrid UD path, and LU under srun: slurm-short below), hosts (every
# case class at the cluster's layout: 2 hosts x 2 ranks or N hosts x 1),
# faults (node2's link down for 2 s, node1's for 20 s, tc netem loss, duplication
# and reordering, the speed table, a host powered
# off: 2 hosts), or one part of it: linkflap, netem, speed (against perftest,
# 1 rank a host), poweroff; slurm (a cluster booted with Slurm, cluster.sh -S:
# jobs as the user mhuser by srun --mpi=pmix, sbatch calling mpirun, salloc;
# a rank killed, a time limit reached, the locked-memory limit), or its
# short part slurm-short (srun of hostname and LU; ci runs it too), or
# slurm-salloc (salloc with two sruns).
# Sets join with +, in one boot: hosts+faults. Prints `ok NAME` or
# `FAIL NAME` with the log's tail, and `N passed, M failed` last.
# MH_IB_TIMEOUT: ARMCI_IB_TIMEOUT of the data cases (default 19; the fault
# cases keep the runtime's default, whose bound they measure).
set -u
set_name=$1 build=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
mpirun_mh=$top/tests/multihost/mh-mpirun.sh
hosts=${MH_NODES:?run inside the test cluster}
per_host=${MH_PER_HOST:-}
[ -n "$per_host" ] || per_host=$((4 / hosts))
[ "$per_host" -ge 1 ] || per_host=1
np=$((hosts * per_host))
logs=${MH_LOGS:-/tmp/mh-logs}
mkdir -p "$logs"
unset ARMCI_NODE_SIZE
export ARMCI_VERBOSE=1
passed=0 failed=0

# check_run NAME NPROCS MARKER LOG: the conditions above, on LOG.
check_run() {
    local name=$1 n=$2 marker=$3 log=$4 why=""
    grep -q -- "$marker" "$log" || why="no '$marker' in its output"
    # (GA's test.x announces a case that must fail as "SHOULD FAIL": not a failure)
    grep -v "SHOULD FAIL" "$log" | grep -q "FAIL" && why="it printed FAIL"
    local dev
    dev=$(grep -c "verbs provider rdma-core: device rxe0 (software" "$log")
    [ "$dev" -eq "$n" ] || why="$dev of $n ranks on rdma-core's rxe0"
    local nodes
    nodes=$(grep -o 'node [0-9]* of [0-9]*' "$log" | awk '{print $4}' | sort -u | tr '\n' ' ')
    [ "$nodes" = "$hosts " ] || why="ranks counted nodes '$nodes', the job has $hosts hosts"
    if grep -q '^ARMCI_CONN_REPORT mode=' "$log"; then
        grep -q "^ARMCI_CONN_REPORT .* procs=$n nodes=$hosts " "$log" ||
            why="the connection report does not count $hosts nodes"
    fi
    echo "$why"
}

# over_budget SECONDS LIMIT: a case over half of its limit fails (the time budget).
. "$top/tests/multihost/over-budget.sh"

# run_case NAME TIMEOUT MARKER [VAR=VALUE...] -- PROGRAM ARGS...
run_case() {
    local name=$1 limit=$2 marker=$3
    shift 3
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local log=$logs/$name.log start=$SECONDS rc why
    # An emulated host on a loaded machine can stall for seconds, which the default RC
    # timeout (3.8 s in all) takes for a lost host: these cases test data, not liveness
    # (the fault cases use the defaults), so they allow 2.1 s x 7 tries.
    env ARMCI_IB_TIMEOUT="${MH_IB_TIMEOUT:-19}" ${envs[@]+"${envs[@]}"} timeout -k 10 "$limit" "$mpirun_mh" "$np" "$per_host" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        why="exit $rc"; [ $rc -eq 124 ] && why="no end within ${limit}s"
    else
        why=$(check_run "$name" "$np" "$marker" "$log")
    fi
    [ -n "$why" ] || why=$(over_budget $((SECONDS - start)) "$limit")
    if [ -z "$why" ]; then
        echo "ok   $name ($((SECONDS - start)) s of ${limit} s)"; passed=$((passed + 1))
    else
        echo "FAIL $name: $why ($((SECONDS - start)) s)"; tail -n 15 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

b=$build
L="${hosts}h${per_host}"
# The three connection modes every case class is run with in the full set.
modes_ondemand=(ARMCI_CONNECT=ondemand)
modes_static=(ARMCI_CONNECT=static)
modes_cap1=(ARMCI_CONNECT=ondemand ARMCI_MAX_CONNECTIONS=1)

apps() { # MODE_NAME VAR=VALUE...
    local m=$1; shift
    run_case "lu-$L-$m" 300 check=PASS "$@" ARMCI_CONN_REPORT=1 -- "$b/apps/lu" -n 192 -b 24
    run_case "randomaccess-$L-$m" 300 check=PASS "$@" ARMCI_CONN_REPORT=1 -- "$b/apps/randomaccess" -l 14
    run_case "lj-$L-$m" 300 check=PASS "$@" ARMCI_CONN_REPORT=1 -- "$b/apps/lj" -c 4 -s 10 -b 16
}
internode() { # MODE_NAME VAR=VALUE...
    local m=$1; shift
    run_case "rma-$L-$m" 300 PASS "$@" -- "$b/tests/common/test_rma" 65536 10
    # Records up to 64 KiB + 1 (where MPI's slices begin): softib's suites take them to 4 MiB;
    # between two emulated kernels the paths are what is proved, not the sizes.
    run_case "msg-$L-$m" 300 PASS "$@" -- "$b/tests/common/test_msg" "${MH_MSG_MAX:-65537}"
    run_case "lock-fifo-$L-$m" 300 PASS "$@" -- "$b/tests/internode/test_lock_fifo"
    run_case "ordering-$L-$m" 300 PASS "$@" -- "$b/tests/internode/test_ordering"
}

# ---- faults between hosts (2 hosts x 2 ranks: node 1 is node2's pair of ranks) ----
steady=$b/tests/internode/test_node_loss

# note NAME WHY: a fault case's verdict.
verdict() {
    if [ -z "$2" ]; then
        echo "ok   $1"; passed=$((passed + 1))
    else
        echo "FAIL $1: $2"; failed=$((failed + 1))
    fi
}

# running_or_why LOG: waits until every rank of the job writing LOG has its device (a fault
# during mpirun's start-up, which alone takes a minute here, is MPI's business, not ours),
# then 10 s more, into the workload; false if that did not happen within 300 s.
running_or_why() {
    local waited=0
    while [ "$(grep -c 'verbs provider rdma-core' "$1")" -lt "$np" ]; do
        [ $waited -ge 300 ] && return 1
        sleep 2; waited=$((waited + 2))
    done
    sleep 10
}

# start_workload SECONDS LIMIT LOG: the checked steady workload for SECONDS in the
# background (its mpirun bounded by LIMIT s, output in LOG, its pid in $job), then
# running_or_why: false if it did not get going.
start_workload() {
    timeout -k 10 "$2" "$mpirun_mh" "$np" "$per_host" "$steady" steady "$1" >"$3" 2>&1 &
    job=$!
    running_or_why "$3"
}

# link_flap HOST SECONDS: HOST's link down for SECONDS in the middle of a job. The job must
# complete with every check held: RC retransmissions ride out a short flap, and connections
# that break are set up anew and their requests replayed (ARMCI_RECOVERY_TIMEOUT, 60 s).
# mpirun's keepalive is raised above the flap (MH_KEEPALIVE_TIME), or mpirun ends the job.
link_flap() {
    local host=$1 secs=$2 log why=""
    log=$logs/linkflap-$host-${secs}s.log
    export MH_KEEPALIVE_TIME=90
    start_workload 60 900 "$log" || why="the job did not start within 300 s"
    unset MH_KEEPALIVE_TIME
    ssh "$host" "nohup sh -c 'ip link set eth0 down; sleep $secs; ip link set eth0 up' >/dev/null 2>&1 &"
    echo "    $host's link down for $secs s at $(date +%T), with every rank in the workload"
    wait $job
    local rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="${why:+$why; }no end within 900 s"
    elif [ $rc -ne 0 ]; then
        why="${why:+$why; }exit $rc: $(grep -o 'ARMCI error.*' "$log" | head -1)"
    else
        [ "$(grep -c 'PASS steady' "$log")" -eq "$np" ] || why="${why:+$why; }exit 0 without every rank's PASS"
        echo "    completed: $(grep -o '[0-9]* rounds in [0-9.]* s' "$log" | head -1), every check held"
    fi
    grep -o "connection to node [0-9] (host node[0-9].*recovered in .*" "$log" | head -4 | sed 's/^/    /'
    verdict "linkflap-$host-${secs}s" "$why"
    [ -z "$why" ] || tail -n 20 "$log" | sed 's/^/    /'
}

fault_linkflap() {
    link_flap node2 2
    link_flap node1 20
}

fault_netem() {
    # 3. Loss, duplication and reordering on both hosts' NICs (tc netem; reordering needs a
    #    delay): UD setup retransmits, RC retransmits, broken connections recover.
    for k in $(seq 1 "$hosts"); do
        ssh "node$k" 'tc qdisc add dev eth0 root netem loss 10% duplicate 1% delay 5ms reorder 1%' ||
            echo "    tc netem failed on node$k"
    done
    run_case "netem-loss10-rma-$L" 900 PASS ARMCI_CONNECT_TIMEOUT=60 -- "$b/tests/common/test_rma" 65536 10
    run_case "netem-loss10-lu-$L" 900 check=PASS ARMCI_CONNECT_TIMEOUT=60 ARMCI_CONN_REPORT=1 -- "$b/apps/lu" -n 192 -b 24
    for k in $(seq 1 "$hosts"); do ssh "node$k" 'tc qdisc del dev eth0 root' 2>/dev/null; done
}

fault_poweroff() {
    local log why=""
    # 4. A host powered off in the middle of a job (SIGKILL to its QEMU): the ranks on node1
    #    end with an error that names the lost node, in bounded time, and leave no names in
    #    node1's /dev/shm. Timed from the power-off: the survivors' error, their exit, and
    #    mpirun's own exit (Open MPI's launcher waits for the dead host's daemon as long as
    #    TCP retransmits to it: it is killed after 60 s, and the note says so).
    log=$logs/poweroff.log
    # Our bound is ARMCI_RECOVERY_TIMEOUT (60 s) after the break: mpirun's keepalive is raised
    # above it, or mpirun ends the job first and nobody is named.
    export MH_KEEPALIVE_TIME=90
    start_workload 600 900 "$log" || why="the job did not start within 300 s"
    unset MH_KEEPALIVE_TIME
    grep -q "PASS steady" "$log" && why="the workload ended before the fault"
    local t0=$SECONDS error_at="" gone_at="" mpirun_at=""
    touch "$MH_CONTROL/poweroff-node2"
    while [ $((SECONDS - t0)) -lt 150 ]; do
        [ -z "$error_at" ] && grep -q "ARMCI error (rank [0-9]*): node 1 (host node2" "$log" &&
            error_at=$((SECONDS - t0))
        [ -z "$gone_at" ] && ! pgrep -x test_node_loss >/dev/null && gone_at=$((SECONDS - t0))
        kill -0 $job 2>/dev/null || { mpirun_at=$((SECONDS - t0)); break; }
        [ -n "$gone_at" ] && [ $((SECONDS - t0 - gone_at)) -ge 60 ] && break
        sleep 1
    done
    if [ -z "$mpirun_at" ]; then
        pkill -x mpirun; sleep 2; pkill -9 -x mpirun
        echo "    mpirun was still waiting for node2's daemon $((SECONDS - t0)) s after the power-off: killed"
    fi
    wait $job 2>/dev/null
    [ -n "$gone_at" ] || why="${why:+$why; }node1's ranks still ran 150 s after the power-off: they hang"
    grep -q "PASS steady" "$log" && why="${why:+$why; }the job passed although a host died"
    grep -q "ARMCI error (rank [0-9]*): node 1 (host node2, .*) is lost" "$log" ||
        why="${why:+$why; }no error naming node 1 (host node2) as lost"
    local left
    left=$(ls /dev/shm | grep -E 'armci|softib' | tr '\n' ' ')
    [ -z "$left" ] || why="${why:+$why; }left in node1's /dev/shm: $left"
    echo "    host node2 powered off: survivors' error after ${error_at:-?} s, their ranks gone after ${gone_at:-?} s, mpirun ended after ${mpirun_at:-never (killed)} s"
    grep -o "ARMCI error (rank [0-9]*): node 1 .* is lost" "$log" | head -2 | sed 's/^/    /'
    verdict "poweroff-node2" "$why"
    [ -z "$why" ] || tail -n 20 "$log" | sed 's/^/    /'
}

perftest_row() { # CSV TOOL BYTES ITERS: perftest between node1 (client) and node2 (server), a row of CSV
    local csv=$1 srv try out
    shift
    out=$logs/$1-$2.txt
    ssh node2 "timeout 120 $1 -d rxe0 -x 1 -s $2 -n $3 -F" >"$logs/$1-$2-server.txt" 2>&1 &
    srv=$!
    # The server starts over ssh, which takes seconds under emulation: retry the
    # client until it reaches the server's port (perftest's own TCP exchange).
    for try in $(seq 1 30); do
        timeout 120 "$1" -d rxe0 -x 1 -s "$2" -n "$3" -F node2 >"$out" 2>&1 && break
        grep -q "Couldn't connect" "$out" || break
        sleep 2
    done
    wait $srv
    # lat: t_typical (usec) of the row for this size; bw: BW average (MB/sec)
    case $1 in
    *_lat) awk -v s="$2" -v t="$1" '$1==s {print t "," s "," $5 ","; exit}' "$out" >>"$csv" ;;
    *_bw) awk -v s="$2" -v t="$1" '$1==s {print t "," s ",," $4; exit}' "$out" >>"$csv" ;;
    esac
}
perftest_rows() { # CSV: the raw device's 8 B latency and 1 MiB bandwidth, write and read
    echo "what,bytes,usec,MB_per_s" >"$1"
    perftest_row "$1" ib_write_lat 8 200
    perftest_row "$1" ib_read_lat 8 200
    perftest_row "$1" ib_write_bw 1048576 50
    perftest_row "$1" ib_read_bw 1048576 50
}

# ---- speed against the raw device: perftest on the same pair, then ours (1 rank a host) ----
speed_table() {
    local csv=$logs/speed.csv
    perftest_rows "$csv"
    BENCH_OPS=put,get,acc-dbl BENCH_SIZES=8,1048576 BENCH_MAX_ITERS=200 timeout -k 10 900 \
        "$mpirun_mh" 2 1 "$b/bench/bench_rma" odcm 1048576 cross-host >"$logs/bench_rma.csv" 2>"$logs/bench_rma.err"
    awk -F, 'NR>1 && $1=="odcm" {print "armci_" $3 "," $4 "," $6 "," $7}' "$logs/bench_rma.csv" >>"$csv"
    cat "$csv"
    # Ratios: ours against the raw device (latency: raw/ours, bandwidth: ours/raw).
    awk -F, '
        {lat[$1 "," $2] = $3; bw[$1 "," $2] = $4}
        END {
            r("put 8 B latency", lat["ib_write_lat,8"], lat["armci_put,8"]);
            r("get 8 B latency", lat["ib_read_lat,8"], lat["armci_get,8"]);
            r("put 1 MiB bandwidth", bw["armci_put,1048576"], bw["ib_write_bw,1048576"]);
            r("get 1 MiB bandwidth", bw["armci_get,1048576"], bw["ib_read_bw,1048576"]);
        }
        function r(what, a, b) {
            if (a > 0 && b > 0) printf "ratio,%s (ours vs raw rxe; 1 = equal, higher is better),%.2f\n", what, a / b
        }
    ' "$csv" | tee -a "$csv"
    [ "$(grep -c '^ratio,' "$csv")" -eq 4 ] &&
        verdict "speed-table" "" || verdict "speed-table" "missing rows (see $logs)"
}

# ---- ours against its peers between the hosts (bench/ga/cross-host.sh runs this set and
# gives MH_PEERS_OUT: the GA builds and programs of bench/ga/prepare.sh, and where the
# rows go). ARMCI-MPI and GA's MPI-PR run over each of Open MPI's transports between the
# hosts named in MH_PEERS_MPI ("tcp ucx"): tcp is ob1 over TCP on eth0; ucx is pml and
# osc ucx over rxe0, with UCX_IB_GID_INDEX=0 (UCX 1.13's own choice, the IPv4 GID, never
# gets a UD datagram through rxe0: its wire-up times out). Ours runs over rxe0 with its
# MPI part on TCP. Every program runs for every variant, then the next program, the whole
# round MH_PEERS_REPS times (5): medians of interleaved runs. ----
peers_run() { # VARIANT PROGRAM REP: one timed run, rows of ga-wall.csv (and rma.csv, patch.csv)
    local v=$1 p=$2 rep=$3 np=4 per=2 prog env=() args=() log kind=${1%-*}
    log=$peers_out/logs/$p.$v.$rep.log
    case $v in
    odcm) kind=odcm env=("LD_LIBRARY_PATH=$b/armci") ;;
    *-ucx) env=(MH_MPI=ucx UCX_IB_GID_INDEX=0) ;;
    esac
    case $p in
    launch) prog=$peers_out/launch ;;
    rma) # 8 B latency and 1 MiB bandwidth, one rank a host
        [ "$kind" = mpi-pr ] && return 0 # no ARMCI-level program of its own
        np=2 per=1 prog=$b/bench/bench_rma args=("$v" 1048576 cross-host)
        [ "$kind" = armci-mpi ] && prog=$b/bench/bench_rma_armci_mpi
        env+=("BENCH_OPS=put,get,acc-dbl" "BENCH_SIZES=8,1048576" BENCH_MAX_ITERS=60) ;;
    patch) # GA's 2-D 2 MiB patch get into malloc'd and registered memory (perf.x's shape), rank 0 and 3
        [ "$kind" = mpi-pr ] && return 0
        prog=$b/bench/bench_ga_patch args=("$v" cross-host default)
        [ "$kind" = armci-mpi ] && prog=$b/bench/bench_ga_patch_armci_mpi
        env+=("BENCH_CASES=malloc,get,512,512;registered,get,512,512") ;;
    ga_ops) prog=$peers_out/ga_ops.$kind args=("$v" 300) ;;
    *) prog=${peers_ga[$kind]}/build/global/testing/$p.x ;;
    esac
    # MPI-PR: one progress rank a host besides the compute ranks
    [ "$kind" = mpi-pr ] && [ "$p" != launch ] && np=6 per=3
    local t0 t1 status=0
    t0=$(date +%s.%N)
    env "${env[@]}" timeout -k 10 900 "$mpirun_mh" "$np" "$per" "$prog" "${args[@]}" >"$log" 2>&1 || status=$?
    t1=$(date +%s.%N)
    [ "$v" = odcm ] && [ $status = 0 ] && [ "$p" != launch ] &&
        [ "$(grep -c 'verbs provider rdma-core: device rxe0' "$log")" -ne "$np" ] && status=rxe0
    echo "$v,$p,$np,$rep,$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'),$status" >>"$peers_out/ga-wall.csv"
    case $p in
    rma | patch) awk -F, -v v="$v" -v r="$rep" '$2 == "cross-host" {print v "," r "," $0}' "$log" >>"$peers_out/$p.csv" ;;
    esac
    [ $status = 0 ] || { peers_failed="$peers_failed $p/$v/$rep"; tail -n 5 "$log" | sed 's/^/    /'; }
}
peers_table() {
    peers_out=${MH_PEERS_OUT:-}
    [ -s "$peers_out/ga-builds.txt" ] || { verdict peers "no MH_PEERS_OUT: run it with bench/ga/cross-host.sh"; return; }
    local reps=${MH_PEERS_REPS:-5} programs=${MH_PEERS_PROGRAMS:-launch rma patch ga_ops jacobi ga_lu test}
    local variants="odcm" t
    for t in ${MH_PEERS_MPI:-tcp ucx}; do variants="$variants armci-mpi-$t mpi-pr-$t"; done
    peers_failed=""
    declare -gA peers_ga
    local kind dir rep p v
    while read -r kind dir; do peers_ga[$kind]=$dir; done <"$peers_out/ga-builds.txt"
    # rxe's own counters (retransmissions, sequence errors) before and after, both hosts
    for k in 1 2; do ssh "node$k" 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep . *' \
        >"$peers_out/logs/rxe-counters-node$k.before" 2>&1; done
    perftest_rows "$peers_out/raw.csv"
    echo "variant,program,processes,rep,seconds,status" >"$peers_out/ga-wall.csv"
    echo "variant,rep,impl,layout,op,bytes,iterations,usec_per_op,MB_per_s" >"$peers_out/rma.csv"
    echo "variant,rep,impl,layout,variant_,local,op,rows,cols,bytes,usec_per_op,MB_per_s" >"$peers_out/patch.csv"
    echo "peers: variants $variants" >"$peers_out/peers-info.txt"
    for rep in $(seq 1 "$reps"); do
        for p in $programs; do
            for v in $variants; do
                peers_run "$v" "$p" "$rep"
            done
        done
        echo "peers: round $rep of $reps done at $(date +%T)"
    done
    for k in 1 2; do ssh "node$k" 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep . *' \
        >"$peers_out/logs/rxe-counters-node$k.after" 2>&1; done
    verdict peers "${peers_failed:+failed runs:$peers_failed}"
}

# ---- Slurm (cluster.sh -S, which run.sh asks for when the set is slurm): jobs started by
# srun, sbatch and salloc as the unprivileged user mhuser, as on a cluster ----
sdir=$logs/user # what the job user writes (sbatch's script and output)
slurm_mca() { # Open MPI's settings of mh-mpirun.sh, as environment: srun starts the ranks itself
    export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=sm,pt2pt \
        OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1 \
        OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0
    mkdir -p "$sdir" && chmod 1777 "$sdir"
}

# as_user CMD...: CMD as the job user, from a shell with a login's locked-memory limit (8 MiB,
# too low for RDMA: the jobs must get slurmd's instead, PropagateResourceLimitsExcept=MEMLOCK).
as_user() {
    setpriv --reuid=mhuser --regid=mhuser --init-groups \
        env HOME=/tmp/home-mhuser USER=mhuser LOGNAME=mhuser \
        bash -c 'ulimit -l 8192 && cd "$HOME" && exec "$@"' as_user "$@"
}

# hosts_keep PROGRAM: empty, or what a host keeps after a job: ARMCI or softib names in
# /dev/shm, a process named PROGRAM.
hosts_keep() {
    local k left why=""
    for k in $(seq 1 "$hosts"); do
        left=$(ssh "node$k" "ls /dev/shm | grep -E 'armci|softib'; pgrep -x '$1' >/dev/null && echo 'a $1 process'" 2>/dev/null | tr '\n' ' ')
        [ -z "$left" ] || why="${why:+$why; }node$k keeps $left"
    done
    echo "$why"
}

# slurm_case NAME TIMEOUT MARKER NPROCS PROGRAM [VAR=VALUE...] -- COMMAND...: COMMAND (srun,
# salloc, sbatch) as the job user; passes on exit 0 and check_run's conditions for NPROCS
# ranks, with no host keeping anything of it (PROGRAM: the ranks' program name).
slurm_case() {
    local name=$1 limit=$2 marker=$3 n=$4 prog=$5
    shift 5
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local log=$logs/slurm-$name.log start=$SECONDS rc why
    (
        export ARMCI_IB_TIMEOUT="${MH_IB_TIMEOUT:-19}"
        for e in ${envs[@]+"${envs[@]}"}; do export "${e?}"; done
        as_user timeout -k 10 "$limit" "$@"
    ) >"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        why="exit $rc"; [ $rc -eq 124 ] && why="no end within ${limit}s"
    else
        why=$(check_run "$name" "$n" "$marker" "$log")
    fi
    local kept
    kept=$(hosts_keep "$prog")
    [ -z "$kept" ] || why="${why:+$why; }$kept"
    [ -n "$why" ] || why=$(over_budget $((SECONDS - start)) "$limit")
    verdict "slurm-$name ($((SECONDS - start)) s of $limit s)" "$why"
    [ -z "$why" ] || tail -n 15 "$log" | sed 's/^/    /'
}

slurm_hostname() {
    # Every host answers, as the job user, with slurmd's unlimited locked-memory limit
    # although the submitting shell has 8 MiB.
    local log=$logs/slurm-hostname.log why="" start=$SECONDS
    as_user timeout -k 10 300 srun -N "$hosts" -n "$hosts" \
        bash -c 'echo "$(hostname) $(id -un) memlock=$(ulimit -l)"' >"$log" 2>&1 ||
        why="srun exit $?"
    local k
    for k in $(seq 1 "$hosts"); do
        grep -q "node$k mhuser memlock=unlimited" "$log" || why="${why:+$why; }no 'node$k mhuser memlock=unlimited'"
    done
    verdict "slurm-hostname-memlock ($((SECONDS - start)) s)" "$why"
    [ -z "$why" ] || tail -n 15 "$log" | sed 's/^/    /'
}

slurm_sbatch_mpirun() {
    # A batch script that calls mpirun in its allocation: no hostfile, no -np (Open MPI
    # reads the allocation); its output file written by the job user.
    local script=$sdir/lu.sbatch out=$sdir/sbatch-lu.out
    {
        echo '#!/bin/bash'
        echo "#SBATCH --job-name=lu"
        echo "#SBATCH --nodes=$hosts"
        echo "#SBATCH --ntasks-per-node=$per_host"
        echo "#SBATCH --time=10"
        echo "#SBATCH --output=$out"
        echo "mpirun --mca pml ob1 --mca btl self,vader,tcp --mca osc sm,pt2pt \\"
        echo "    --mca btl_vader_single_copy_mechanism none --mca mpi_yield_when_idle 1 \\"
        echo "    --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --bind-to none \\"
        echo "    -x ARMCI_VERBOSE -x ARMCI_CONN_REPORT -x ARMCI_IB_TIMEOUT \\"
        echo "    $b/apps/lu -n 192 -b 24"
    } >"$script"
    chmod 644 "$script"
    rm -f "$out"
    slurm_case "sbatch-mpirun-lu-$L" 600 check=PASS "$np" lu ARMCI_CONN_REPORT=1 -- \
        bash -c 'sbatch --wait "$1"; rc=$?; cat "$2"; exit $rc' sbatch "$script" "$out"
}

slurm_sbatch_srun() {
    # The batch script of docs/CLUSTER.md: srun in the allocation, armci-info on every host
    # first (what a bug report sends), then the program by srun --mpi=pmix.
    local script=$sdir/lu-srun.sbatch out=$sdir/sbatch-srun-lu.out k
    {
        echo '#!/bin/bash'
        echo "#SBATCH --job-name=lu-srun"
        echo "#SBATCH --nodes=$hosts"
        echo "#SBATCH --ntasks-per-node=$per_host"
        echo "#SBATCH --time=10"
        echo "#SBATCH --output=$out"
        echo "srun -N $hosts -n $hosts --output=$sdir/armci-info-%N.txt $b/tools/armci-info"
        echo "srun --mpi=pmix $b/apps/lu -n 192 -b 24"
    } >"$script"
    chmod 644 "$script"
    rm -f "$out" "$sdir"/armci-info-node*.txt
    slurm_case "sbatch-srun-lu-$L" 600 check=PASS "$np" lu ARMCI_CONN_REPORT=1 -- \
        bash -c 'sbatch --wait "$1"; rc=$?; cat "$2"; exit $rc' sbatch "$script" "$out"
    local why=""
    for k in $(seq 1 "$hosts"); do
        grep -q "rdma-core .*1 device.*rxe0" "$sdir/armci-info-node$k.txt" 2>/dev/null ||
            why="${why:+$why; }armci-info on node$k does not list rdma-core's rxe0"
    done
    verdict "slurm-srun-armci-info-every-host" "$why"
    [ -z "$why" ] || cat "$sdir"/armci-info-node*.txt 2>/dev/null | head -12 | sed 's/^/    /'
}

# slurm_kill NAME SRUN_OPTION...: the steady workload under srun; rank 2 (node2's lowest: its
# data server's process) killed by SIGKILL once every rank runs. The step must end and no
# host keep anything; with --kill-on-bad-exit=0 the survivors must end with ARMCI's error
# naming node 1 (host node2). Times from the kill.
slurm_kill() {
    local name=$1
    shift
    local log=$logs/slurm-$name.log why="" job t0 rc error_at="" end_at=""
    # The runtime's default ARMCI_IB_TIMEOUT: the liveness bound of the day.
    as_user timeout -k 10 900 srun --mpi=pmix -N "$hosts" -n "$np" "$@" "$steady" steady 600 >"$log" 2>&1 &
    job=$!
    if running_or_why "$log"; then
        local pid
        pid=$(ssh node2 'for p in $(pgrep -x test_node_loss); do tr "\0" "\n" </proc/$p/environ | grep -qx SLURM_PROCID=2 && echo $p; done' 2>/dev/null)
        t0=$SECONDS
        if [ -n "$pid" ] && ssh node2 "kill -9 $pid" 2>/dev/null; then
            while kill -0 $job 2>/dev/null && [ $((SECONDS - t0)) -lt 300 ]; do
                [ -z "$error_at" ] && grep -q "ARMCI error (rank [0-9]*): node 1 (host node2" "$log" &&
                    error_at=$((SECONDS - t0))
                sleep 1
            done
            kill -0 $job 2>/dev/null || end_at=$((SECONDS - t0))
            [ -z "$error_at" ] && grep -q "ARMCI error (rank [0-9]*): node 1 (host node2" "$log" && error_at=$end_at
        else
            why="no rank 2 on node2 to kill"
        fi
    else
        why="the job did not start within 300 s"
    fi
    wait $job
    rc=$?
    [ -n "$end_at" ] || why="${why:+$why; }the step still ran 300 s after the kill"
    [ $rc -ne 0 ] || why="${why:+$why; }srun exit 0 although a rank was killed"
    grep -q "PASS steady" "$log" && why="${why:+$why; }the job passed although a rank was killed"
    # Without the kill on a bad exit the survivors would go on to ARMCI's error naming node 1
    # (the liveness bound). Slurm's PMIx plugin does not let them: its error handler kills the
    # step when a client dies without finalizing (22.05: "Error handler invoked"), before they
    # wait on node 1. Either end passes; which one came is printed.
    local how=""
    grep -q "mpi/pmix.*Error handler invoked" "$log" && how="Slurm's PMIx plugin killed the step"
    [ -n "$error_at" ] && how="${how:+$how; }the survivors' ARMCI error named node 1 (host node2) after $error_at s"
    case " $* " in
    *" --kill-on-bad-exit=0 "*)
        [ -n "$how" ] || why="${why:+$why; }neither an ARMCI error naming node 1 nor the PMIx plugin's kill" ;;
    esac
    sleep 2 # slurmstepd's last SIGKILLs
    local kept
    kept=$(hosts_keep test_node_loss)
    [ -z "$kept" ] || why="${why:+$why; }$kept"
    echo "    rank 2 killed: step ended after ${end_at:-?} s (srun exit $rc)${how:+: $how}"
    grep -o "ARMCI error (rank [0-9]*): node 1 .*" "$log" | head -1 | cut -c1-160 | sed 's/^/    /'
    grep -m1 -o "srun: error: .*" "$log" | sed 's/^/    /'
    verdict "slurm-$name" "$why"
    [ -z "$why" ] || tail -n 20 "$log" | sed 's/^/    /'
}

slurm_timelimit() {
    # A job that reaches its time limit (1 minute; KillWait 5 s): the step ends, nothing kept.
    local log=$logs/slurm-timelimit.log why="" start=$SECONDS rc
    as_user timeout -k 10 600 srun --mpi=pmix -N "$hosts" -n "$np" -t 1 "$steady" steady 600 >"$log" 2>&1
    rc=$?
    [ $rc -ne 124 ] || why="no end within 600 s"
    [ $rc -ne 0 ] || why="srun exit 0"
    grep -q "DUE TO TIME LIMIT" "$log" || why="${why:+$why; }no 'DUE TO TIME LIMIT' from Slurm"
    grep -q "PASS steady" "$log" && why="${why:+$why; }the workload ended before its time limit"
    sleep 2
    local kept
    kept=$(hosts_keep test_node_loss)
    [ -z "$kept" ] || why="${why:+$why; }$kept"
    grep -m1 -o "\*\*\* .*DUE TO TIME LIMIT.*" "$log" | sed "s/^/    /"
    verdict "slurm-timelimit-1min ($((SECONDS - start)) s, srun exit $rc)" "$why"
    [ -z "$why" ] || tail -n 20 "$log" | sed 's/^/    /'
}

slurm_memlock_low() {
    # The usual RDMA-under-Slurm failure, on purpose: the submitting shell's 8 MiB passed on
    # (--propagate=MEMLOCK); the runtime must say what to change.
    local log=$logs/slurm-memlock-low.log why="" start=$SECONDS rc
    as_user timeout -k 10 300 srun --mpi=pmix -N "$hosts" -n "$np" --propagate=MEMLOCK \
        "$b/tests/common/test_rma" 65536 10 >"$log" 2>&1
    rc=$?
    [ $rc -ne 124 ] || why="no end within 300 s"
    [ $rc -ne 0 ] || why="exit 0 with an 8 MiB locked-memory limit"
    grep -q "ibv_reg_mr of .* failed: .*the locked-memory limit (ulimit -l) is 8192 KiB" "$log" ||
        why="${why:+$why; }no error naming the locked-memory limit"
    grep -m1 -o "ARMCI error.*ulimit -l.*" "$log" | cut -c1-220 | sed 's/^/    /'
    local kept
    kept=$(hosts_keep test_rma)
    [ -z "$kept" ] || why="${why:+$why; }$kept"
    verdict "slurm-memlock-propagated-8MiB ($((SECONDS - start)) s)" "$why"
    [ -z "$why" ] || tail -n 20 "$log" | sed 's/^/    /'
}

# The short part (in the ci set too): every host as the job user with slurmd's memlock
# limit, and LU started by srun.
slurm_short() {
    [ -n "${SLURM_CONF:-}" ] || { verdict slurm "no Slurm in this cluster (cluster.sh -S)"; return 1; }
    slurm_mca
    slurm_hostname
    slurm_case "srun-pmix-lu-$L" 600 check=PASS "$np" lu ARMCI_CONN_REPORT=1 -- \
        srun --mpi=pmix -N "$hosts" -n "$np" "$b/apps/lu" -n 192 -b 24
}

slurm_set() {
    slurm_short || return
    if [ -x "$b/tests/ga/c_patch" ]; then
        slurm_case "srun-pmix-ga-c_patch-$L" 600 PASS "$np" c_patch -- \
            srun --mpi=pmix -N "$hosts" -n "$np" "$b/tests/ga/c_patch"
    else
        verdict "slurm-srun-pmix-ga-c_patch" "tests/ga/c_patch not built"
    fi
    slurm_sbatch_mpirun
    slurm_sbatch_srun
    slurm_kill "kill-rank2-default"
    slurm_kill "kill-rank2-no-kill-on-bad-exit" --kill-on-bad-exit=0
    slurm_timelimit
    slurm_memlock_low
    slurm_salloc
}

slurm_salloc() {
    # Two jobs' ranks in one log: no connection report (check_run's counts it for one job);
    # the second srun runs only when the first passed.
    slurm_case "salloc-srun-twice-$L" 600 PASS $((2 * np)) test_rma ARMCI_CONN_REPORT=0 -- \
        salloc -N "$hosts" -n "$np" bash -c \
        'srun --mpi=pmix "$0" 65536 10 && srun --mpi=pmix "$0" 65536 10' "$b/tests/common/test_rma"
}

for part in ${set_name//+/ }; do
case $part in
ci)
    # One application and the data path between two kernels, on demand; locks, ordering
    # and static connections between hosts are the set hosts' (the rxe VM and softib
    # prove them in CI): each case here costs about 35 s of the test command's 35 minutes.
    run_case "lu-$L-ondemand" 300 check=PASS ARMCI_CONN_REPORT=1 -- "$b/apps/lu" -n 192 -b 24
    run_case "rma-$L-ondemand" 300 PASS "${modes_ondemand[@]}" -- "$b/tests/common/test_rma" 65536 10
    run_case "msg-$L-ondemand" 300 PASS "${modes_ondemand[@]}" -- "$b/tests/common/test_msg" \
        "${MH_MSG_MAX:-65537}"
    # The hybrid UD data path between two kernels' rdma_rxe.
    run_case "rma-$L-hybrid-ud" 300 PASS ARMCI_HYBRID=ud -- "$b/tests/common/test_rma" 65536 10
    slurm_short
    ;;
hosts)
    # Applications in every mode; the other classes on demand, with the data path's
    # main test also static and capped.
    for m in ondemand static cap1; do
        eval "vars=(\"\${modes_$m[@]}\")"
        apps "$m" "${vars[@]}"
    done
    internode ondemand "${modes_ondemand[@]}"
    run_case "rma-$L-static" 300 PASS "${modes_static[@]}" -- "$b/tests/common/test_rma" 65536 10
    run_case "rma-$L-cap1" 300 PASS "${modes_cap1[@]}" -- "$b/tests/common/test_rma" 65536 10
    run_case "patterns-alltoall-$L" 300 PASS ARMCI_BARRIER=mpi -- "$b/tests/odcm/test_patterns" alltoall
    run_case "cap1-$L" 300 PASS ARMCI_BARRIER=mpi "${modes_cap1[@]}" -- "$b/tests/odcm/test_cap" 4
    run_case "strided-$L" 300 PASS -- "$b/tests/strided/test_strided" 10
    run_case "flag-$L" 300 PASS -- "$b/tests/strided/test_flag" 10
    run_case "barrier-$L" 300 PASS -- "$b/tests/barrier/test_barrier" 200
    run_case "barrier-$L-static" 300 PASS "${modes_static[@]}" -- "$b/tests/barrier/test_barrier" 200
    run_case "threads-ops-$L-t2" 300 PASS -- "$b/tests/threads/test_threads" ops 2
    run_case "threads-mutex-$L-t2" 300 PASS -- "$b/tests/threads/test_threads" mutex 2
    run_case "threads-mutex-$L-t2-cap1" 300 PASS "${modes_cap1[@]}" -- "$b/tests/threads/test_threads" mutex 2
    for g in c_patch c_scatter f_basic f_lock; do
        [ -x "$b/tests/ga/$g" ] || { echo "FAIL ga-$g: not built"; failed=$((failed + 1)); continue; }
        run_case "ga-$g-$L" 300 PASS -- "$b/tests/ga/$g"
    done
    run_case "ga-f_basic-$L-static" 300 PASS "${modes_static[@]}" -- "$b/tests/ga/f_basic"
    if [ -n "${MH_GA_TESTX:-}" ]; then
        run_case "ga-test.x-$L" 900 'All tests successful' -- "$MH_GA_TESTX"
    fi
    ;;
faults)
    fault_linkflap
    fault_netem
    speed_table
    fault_poweroff # last: it powers node2 off
    ;;
slurm) slurm_set ;;
slurm-short) slurm_short ;;
slurm-salloc) slurm_mca; slurm_salloc ;;
linkflap) fault_linkflap ;;
netem) fault_netem ;;
speed) speed_table ;;
peers) peers_table ;;
poweroff) fault_poweroff ;;
*)
    echo "cases.sh: unknown set $part" >&2; exit 2 ;;
esac
done

# Nothing of ARMCI or softib left in any host's /dev/shm.
for k in $(seq 1 "$hosts"); do
    [ -e "${MH_CONTROL:-/nonexistent}/poweroff-node$k.done" ] && continue # powered off
    left=$(ssh "node$k" 'ls /dev/shm' 2>/dev/null | grep -E 'armci|softib' | tr '\n' ' ')
    if [ -n "$left" ]; then
        echo "FAIL shm-clean-node$k: $left"; failed=$((failed + 1))
    else
        echo "ok   shm-clean-node$k"; passed=$((passed + 1))
    fi
done
echo "multihost $set_name on $hosts hosts x $per_host: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
