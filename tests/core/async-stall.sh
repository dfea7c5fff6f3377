#!/bin/sh
# async-stall.sh RUN_MPI SHIM TEST: a job whose Open MPI async progress thread gets no CPU
# between MPI_Init and MPI_Finalize (the shim starves it once, 1 s) still ends cleanly: the
# callback MPI_Init queued there runs before Open MPI unloads its code (core/mpi_async.h).
# Without the drain, every such run died of SIGSEGV after PASS.
run_mpi=$1 shim=$2 test=$3
if [ "${RUN_MPI_IMPL:-openmpi}" != openmpi ]; then
    echo "SKIP: not Open MPI"
    exit 77
fi
out=$(ASYNC_STALL_MS=1000 ASYNC_STALL_SEEN=1 LD_PRELOAD=$shim "$run_mpi" 4 "$test" 2>&1)
rc=$?
echo "$out" | tail -n 20
if ! echo "$out" | grep -q "async-stall: a component callback queued"; then
    # Where the shim knows the layout (libevent 2.1 under Open MPI 4: Debian 12), seeing no
    # callback means the shim no longer starves the thread: a pass would test nothing.
    launcher=${RUN_MPI_LAUNCHER:-mpiexec}
    if echo "$out" | grep -q "async-stall: libevent 2\.1\." &&
        "$launcher" --version 2>/dev/null | grep -Eq "\((OpenRTE|Open MPI)\) 4\."; then
        echo "FAIL: Open MPI 4 with libevent 2.1, yet the shim saw no pmix callback queued"
        exit 1
    fi
    echo "SKIP: no pmix component callback was seen (not Open MPI 4 with libevent 2.1)"
    exit 77
fi
[ $rc -eq 0 ] || { echo "FAIL: the job ended with $rc after a starved async thread"; exit 1; }
echo "PASS"
