/* ARMCI_Init/Finalize: brings every module up in dependency order and down in reverse. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "armci.h"
#include "api/barrier.h"
#include "core/config.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/mpi_async.h"
#include "core/mutant.h"
#include "api/groups.h"
#include "api/messaging.h"
#include "api/mutex.h"
#include "verbs/atomics.h"
#include "verbs/memory.h"
#include "core/node_shared.h"
#include "api/profiling.h"
#include "transport/client.h"
#include "dataserver/link.h"
#include "dataserver/server.h"
#include "odcm/cm.h"
#include "api/user_handles.h"
#include "core/runtime.h"
#include "api/segment.h"
#include "api/sync.h"
#include "core/threads.h"
#include "core/topology.h"
#include "core/wait_policy.h"

/* With ARMCI_VERBOSE=1, names the library file, so nobody mistakes another ARMCI for it. */
static void log_library(void)
{
    Dl_info info;
    const char *file =
        dladdr((void *)PARMCI_Init, &info) && info.dli_fname ? info.dli_fname : "(unknown file)";
    if (rt.me != 0)
        return;
    config_warn_unknown(environ);
    armci_log("ARMCI-ODCM %d.%d: libarmci code in %s", ARMCI_ODCM_VERSION_MAJOR,
              ARMCI_ODCM_VERSION_MINOR, file);
    if (cfg.verbose)
        config_dump(stderr, false);
}

/*
 * The test suites' launcher (tests/run-mpi.sh) says how many processes and
 * nodes it asked for: a test started by the wrong mpiexec runs as N jobs of
 * one process each, which pass while testing nothing.
 */
static void check_test_layout(void)
{
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    bool wrong = (cfg.test_expect_np && world != cfg.test_expect_np) ||
                 (cfg.test_expect_nodes && topo.num_nodes != cfg.test_expect_nodes);
    /* Every rank sees the same counts: rank 0 alone reports and aborts, since
     * MPICH's launcher may drop the message when all ranks abort at once. */
    if (wrong && rt.me != 0)
        MPI_Barrier(rt.comm);
    if (cfg.test_expect_np && world != cfg.test_expect_np)
        armci_die("ARMCI_Init",
                  "this job has %d processes but ARMCI_TEST_EXPECT_NP=%d: the launcher is not "
                  "the MPI this program was built with, or it started the processes as "
                  "separate jobs",
                  world, cfg.test_expect_np);
    if (cfg.test_expect_nodes && topo.num_nodes != cfg.test_expect_nodes)
        armci_die("ARMCI_Init",
                  "the %d processes span %d nodes but ARMCI_TEST_EXPECT_NODES=%d "
                  "(ARMCI_NODE_SIZE=%d)",
                  rt.nprocs, topo.num_nodes, cfg.test_expect_nodes, cfg.node_size);
}

/* A name unique to this job for its shared-memory objects. */
static void make_job_id(void)
{
    unsigned long long id = 0;
    if (rt.me == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        id = ((unsigned long long)getpid() << 32) ^ (unsigned long long)ts.tv_nsec ^
             ((unsigned long long)ts.tv_sec << 12);
    }
    MPI_Bcast(&id, 1, MPI_UNSIGNED_LONG_LONG, 0, rt.comm);
    snprintf(rt.job_id, sizeof(rt.job_id), "%llx", id);
    armci_log("job id %s (shared-memory objects are named /armci-%s-*)", rt.job_id, rt.job_id);
}

/*
 * The inter-node data path, bottom up: the client endpoint, this node's data
 * server (master), the connection manager (static mode connects to every
 * server here, so the servers exist first), then the server thread.
 */
static void start_inter_node(void)
{
    if (!net_active())
        return;
    client_init();
    server_link_init();
    if (topo_is_master())
        server_init();
    struct cm_client_env env;
    client_cm_env(&env);
    cm_init(&env);
    if (topo_is_master())
        server_start();
    /* Nobody sends before every data server is listening. */
    MPI_Barrier(rt.comm);
    if (fault_injected(FAULT_LINK_EVERY_PROCESS))
        server_link_ping();
}

static void stop_inter_node(void)
{
    if (!net_active())
        return;
    /* Every client has fenced (ARMCI_Finalize did): no request is left unanswered. */
    MPI_Barrier(rt.comm);
    if (topo_is_master())
        server_stop();
    cm_fini();
    if (topo_is_master())
        server_fini();
    server_link_close();
    client_fini();
}

static int init_common(int *argc, char ***argv, int requested, MPI_Comm comm, bool have_comm)
{
    if (rt.initialized)
        return 0;
    if (rt.finalized)
        armci_die("ARMCI_Init", "ARMCI cannot be initialised again after ARMCI_Finalize");

    int up = 0;
    MPI_Initialized(&up);
    if (!up) {
        MPI_Init_thread(argc, argv, requested, &rt.thread_level);
        rt.we_initialized_mpi = true;
    } else {
        MPI_Query_thread(&rt.thread_level);
    }
    MPI_Comm_dup(have_comm ? comm : MPI_COMM_WORLD, &rt.comm);
    MPI_Comm_rank(rt.comm, &rt.me);
    MPI_Comm_size(rt.comm, &rt.nprocs);

    cfg_load();
    config_check_agreement(rt.comm);
    log_library();
    /* MPI may have granted MULTIPLE before us (GA initialises MPI itself): then any thread
     * may call ARMCI at any time. */
    threads_init(rt.thread_level == MPI_THREAD_MULTIPLE);
    armci_log("thread level %d: %s", rt.thread_level,
              rt_threaded ? "every call may come from any thread"
                          : "calls from one thread at a time");
    make_job_id();
    topo_init();
    check_test_layout();
    config_resolve_hybrid(rt.comm, topo.num_nodes);
    wait_policy_init();
    node_shared_init();
    groups_init_world(&rt.world_group);
    rt.default_group = rt.world_group;
    handles_init();
    message_init();
    net_init();
    rmw_route_choose(); /* before connections: it may want loopback ones */
    start_inter_node();
    rt.initialized = true;
    barrier_init();
    MPI_Barrier(rt.comm);
    return 0;
}

int PARMCI_Init(void)
{
    return init_common(NULL, NULL, MPI_THREAD_SINGLE, MPI_COMM_NULL, false);
}
PROFILED(Init)

int PARMCI_Init_args(int *argc, char ***argv)
{
    return init_common(argc, argv, MPI_THREAD_SINGLE, MPI_COMM_NULL, false);
}
PROFILED(Init_args)

int PARMCI_Init_thread(int armci_requested)
{
    return init_common(NULL, NULL, armci_requested, MPI_COMM_NULL, false);
}
PROFILED(Init_thread)

int PARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm)
{
    return init_common(NULL, NULL, armci_requested, comm, true);
}
PROFILED(Init_thread_comm)

int PARMCI_Initialized(void)
{
    return rt.initialized;
}
PROFILED(Initialized)

int PARMCI_Finalize(void)
{
    if (!rt.initialized)
        return 0;
    sync_all_fence();
    MPI_Barrier(rt.comm);

    barrier_fini();
    mutex_fini();
    seg_fini();
    stop_inter_node();
    net_fini();
    message_fini();
    handles_fini();
    groups_fini();
    node_shared_fini();
    topo_fini();
    MPI_Comm_free(&rt.comm);
    threads_fini();
    rt.initialized = false;
    rt.finalized = true;
    /* Whoever calls MPI_Finalize (we or the program), Open MPI 4 must have run its queued
     * PMIx callbacks by then (core/mpi_async.h). */
#if !ARMCI_MUTANT_IS(finalize_undrained)
    mpi_async_drain();
#endif
    if (rt.we_initialized_mpi)
        MPI_Finalize();
    return 0;
}
PROFILED(Finalize)

/* Shared memory is unlinked as soon as it is mapped, so there is nothing left to clean. */
void ARMCI_Cleanup(void)
{
}

void ARMCI_Error(const char *msg, int code)
{
    int rank = -1, up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "ARMCI error (rank %d) in ARMCI_Error: %s (code %d)\n", rank,
            msg ? msg : "(no message)", code);
    fflush(stderr);
    if (up && !down)
        MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
    abort();
}
