#define _GNU_SOURCE /* accept4, struct ucred */
/*
 * The local link: processes of a node ask their data server (a thread of
 * the node's master, maybe in another process) to map and register new
 * segments, to re-check lock queues after a same-node unlock, and to stop.
 *
 * It is an abstract-namespace unix SEQPACKET socket: message boundaries are
 * kept, nothing appears in the file system, and the server can sleep on it
 * together with its completion channel. Abstract sockets have no file
 * permissions, so both ends authenticate each other by SO_PEERCRED: the
 * server accepts only this job's processes of this node (uid and pid, as
 * exchanged at init), and clients only talk to the master's pid. The name
 * carries 128 random bits, so nobody can bind it before the server does.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fault.h"
#include "core/runtime.h"
#include "core/shm.h"
#include "core/threads.h"
#include "core/topology.h"
#include "core/util.h"
#include "dataserver/link.h"
#include "dataserver/link_server.h"
#include "dataserver/locks.h"
#include "dataserver/registry.h"

enum link_type { LINK_MAP = 1, LINK_UNMAP, LINK_NOTIFY_UNLOCK, LINK_STOP, LINK_PING };

struct link_msg {
    int32_t type;
    uint32_t flags; /* LINK_MAP: enum registry_kind */
    uint64_t seg_id;
    uint64_t size;
    uint64_t wanted; /* LINK_MAP: where the client would like the mapping, 0: anywhere */
    char name[96];
};

struct link_reply {
    uint64_t server_base;
    uint32_t rkey;
    int32_t status; /* 0 or an errno value */
};

/* What every process of the node learns at init (server_link_init). */
static struct {
    char secret[33]; /* hex, part of the socket name */
    pid_t server_pid;
    pid_t *local_pids; /* [node processes], master only */
    int nlocal;
} node_link;

void server_link_init(void)
{
    struct {
        char secret[33];
        pid_t pid;
    } shared = {.pid = getpid()};
    if (topo_is_master()) {
        unsigned char r[16];
        if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
            armci_die("ARMCI_Init", "getrandom for the data server's socket name failed: %s",
                      strerror(errno));
        for (int i = 0; i < 16; i++)
            snprintf(shared.secret + 2 * i, 3, "%02x", r[i]);
    }
    MPI_Bcast(&shared, sizeof(shared), MPI_BYTE, 0, topo.node_comm);
    memcpy(node_link.secret, shared.secret, sizeof(node_link.secret));
    node_link.server_pid = shared.pid;

    pid_t me = getpid();
    MPI_Comm_size(topo.node_comm, &node_link.nlocal);
    if (topo_is_master())
        node_link.local_pids = xmalloc(sizeof(pid_t) * (size_t)node_link.nlocal);
    MPI_Gather(&me, sizeof(me), MPI_BYTE, node_link.local_pids, sizeof(me), MPI_BYTE, 0,
               topo.node_comm);
}

static socklen_t link_address(struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    /* sun_path[0] == 0: the abstract namespace. */
    int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "armci-%s-ds%d-%s", rt.job_id,
                     topo.my_node, node_link.secret);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static bool peer_credentials(int fd, struct ucred *cred)
{
    socklen_t len = sizeof(*cred);
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) == 0 && len == sizeof(*cred);
}

/* ---- server side ---- */

struct link_peer {
    int fd;
    int local; /* node-local index of the process */
};

static int listen_fd = -1;
static struct link_peer *peers;
static int npeers, cappeers;
static struct pollfd *pollset; /* listen_fd, then every peer */
static void (*stop_server)(void);

void link_listen(void (*on_stop)(void))
{
    stop_server = on_stop;
    struct sockaddr_un sa;
    socklen_t len = link_address(&sa);
    listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, len) ||
        listen(listen_fd, SOMAXCONN))
        armci_die("ARMCI_Init", "data server: cannot listen on its local socket: %s",
                  strerror(errno));
    pollset = xmalloc(sizeof(*pollset));
}

void link_close(void)
{
    for (int i = 0; i < npeers; i++)
        close(peers[i].fd);
    free(peers);
    free(pollset);
    free(node_link.local_pids);
    peers = NULL;
    pollset = NULL;
    node_link.local_pids = NULL;
    npeers = cappeers = 0;
    if (listen_fd >= 0)
        close(listen_fd);
    listen_fd = -1;
    stop_server = NULL;
}

struct pollfd *link_pollfds(int *n)
{
    *n = 0;
    if (listen_fd < 0)
        return NULL;
    pollset[0] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
    for (int i = 0; i < npeers; i++)
        pollset[1 + i] = (struct pollfd){.fd = peers[i].fd, .events = POLLIN};
    *n = 1 + npeers;
    return pollset;
}

static void drop_peer(int index)
{
    close(peers[index].fd);
    peers[index] = peers[--npeers];
}

/* The node-local index of the job's process `cred` names, or -1 for anyone else. */
static int job_process(const struct ucred *cred)
{
    if (cred->uid != geteuid())
        return -1;
    for (int i = 0; i < node_link.nlocal; i++)
        if (node_link.local_pids[i] == cred->pid)
            return i;
    return -1;
}

static void accept_peer(void)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    struct ucred cred;
    int local = peer_credentials(fd, &cred) ? job_process(&cred) : -1;
    if (local < 0) {
        /* Counted, and said a few times only: a stranger must not flood the job's output. */
        static long refused;
        if (refused++ < 8)
            armci_warn("data server: refused a local connection from pid %d (uid %d): not a "
                       "process of this job on this node%s",
                       (int)cred.pid, (int)cred.uid,
                       refused == 8 ? " (no more such warnings)" : "");
        close(fd);
        return;
    }
    if (npeers == cappeers) {
        cappeers = cappeers ? 2 * cappeers : 8;
        peers = xrealloc(peers, sizeof(*peers) * (size_t)cappeers);
        pollset = xrealloc(pollset, sizeof(*pollset) * (size_t)(cappeers + 1));
    }
    peers[npeers++] = (struct link_peer){fd, local};
}

/* What the test hook holds at the wanted address (FAULT_SERVER_ELSEWHERE). */
#define TEST_HOLD 4096

/* Test hook: the last node's data server finds the wanted address taken (true: it holds a page
 * there while it maps, so that the kernel cannot put the mapping there by chance either). */
static bool hold_for_test(uint64_t wanted)
{
    return wanted && fault_injected(FAULT_SERVER_ELSEWHERE) && topo.my_node == topo.num_nodes - 1 &&
           shm_occupy((void *)(uintptr_t)wanted, TEST_HOLD);
}

static int map_segment(const struct link_peer *p, const struct link_msg *m, struct link_reply *r)
{
    bool held = hold_for_test(m->wanted);
    int status = registry_map(m->seg_id, m->name, m->size, (enum registry_kind)m->flags, p->local,
                              m->wanted, &r->server_base, &r->rkey);
    if (held)
        shm_unmap((void *)(uintptr_t)m->wanted, TEST_HOLD);
    return status;
}

/* Executes one well-formed request of peer p; returns the reply's status (errno value). */
static int execute(const struct link_peer *p, struct link_msg *m, struct link_reply *r)
{
    switch (m->type) {
    case LINK_MAP:
        m->name[sizeof(m->name) - 1] = 0;
        if (m->flags >= REGISTRY_KIND_MAX)
            return EINVAL;
        return map_segment(p, m, r);
    case LINK_UNMAP:
        return registry_unmap(m->seg_id, p->local);
    case LINK_STOP:
        /* Only the master itself (the process the server runs in) stops it. */
        if (p->local != 0)
            return EPERM;
        stop_server();
        return 0;
    case LINK_PING:
        return 0;
    default:
        return EINVAL;
    }
}

static void serve(int index)
{
    struct link_peer *p = &peers[index];
    struct link_msg m;
    ssize_t got = recv(p->fd, &m, sizeof(m), MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        drop_peer(index); /* the process closed its end (finalize or exit) */
        return;
    }
    if (got < 0)
        return;
    if (got == sizeof(m) && m.type == LINK_NOTIFY_UNLOCK) {
        locks_rescan();
        return; /* no answer expected */
    }
    struct link_reply r = {0};
    r.status = got == sizeof(m) ? execute(p, &m, &r) : EINVAL;
    if (send(p->fd, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(r))
        armci_warn("data server: cannot answer local process %d: %s", p->local, strerror(errno));
}

void link_handle(const struct pollfd *fds, int n)
{
    /* Peers first, from the end: drop_peer moves the last peer into the dropped slot. */
    for (int i = n - 1; i >= 1; i--)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
            serve(i - 1);
    if (n > 0 && (fds[0].revents & POLLIN))
        accept_peer();
}

/* ---- client side (any process of the node) ---- */

static int client_fd = -1;

static int connected_fd(void)
{
    if (client_fd >= 0)
        return client_fd;
    struct sockaddr_un sa;
    socklen_t len = link_address(&sa);
    client_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (client_fd < 0 || connect(client_fd, (struct sockaddr *)&sa, len))
        armci_die(NULL, "cannot reach the data server of node %d on its local socket: %s",
                  topo.my_node, strerror(errno));
    struct ucred cred;
    if (!peer_credentials(client_fd, &cred) || cred.pid != node_link.server_pid ||
        cred.uid != geteuid())
        armci_die(NULL,
                  "the local socket of node %d's data server belongs to pid %d, not to "
                  "this job's master (pid %d)",
                  topo.my_node, (int)cred.pid, (int)node_link.server_pid);
    return client_fd;
}

/* Under the runtime lock: threads share the one socket, and its replies come in order. */
static struct link_reply exchange(const struct link_msg *m, bool wait_reply)
{
    rt_lock();
    int fd = connected_fd();
    struct link_reply r = {0};
    if (send(fd, m, sizeof(*m), MSG_NOSIGNAL) != sizeof(*m))
        armci_die(NULL, "sending to the data server of node %d failed: %s", topo.my_node,
                  strerror(errno));
    if (wait_reply && recv(fd, &r, sizeof(r), 0) != sizeof(r))
        armci_die(NULL, "the data server of node %d did not answer: %s", topo.my_node,
                  strerror(errno));
    rt_unlock();
    return r;
}

void server_link_map_segment(uint64_t seg_id, const char *name, size_t size, bool lock_block,
                             uint64_t wanted, uint64_t *server_base, uint32_t *rkey)
{
    struct link_msg m = {.type = LINK_MAP,
                         .flags = lock_block ? REGISTRY_LOCKS : REGISTRY_DATA,
                         .seg_id = seg_id,
                         .size = size,
                         .wanted = wanted};
    snprintf(m.name, sizeof(m.name), "%s", name);
    struct link_reply r = exchange(&m, true);
    if (r.status)
        armci_die("ARMCI_Malloc", "the data server of node %d could not map %s (%zu bytes): %s",
                  topo.my_node, name, size, strerror(r.status));
    *server_base = r.server_base;
    *rkey = r.rkey;
}

void server_link_unmap_segment(uint64_t seg_id)
{
    struct link_msg m = {.type = LINK_UNMAP, .seg_id = seg_id};
    struct link_reply r = exchange(&m, true);
    if (r.status)
        armci_warn("the data server of node %d did not unmap segment %llx: %s", topo.my_node,
                   (unsigned long long)seg_id, strerror(r.status));
}

void server_link_notify_unlock(void)
{
    if (topo.num_nodes <= 1)
        return; /* no data server: every locker is on this node */
    struct link_msg m = {.type = LINK_NOTIFY_UNLOCK};
    exchange(&m, false);
}

void server_link_ping(void)
{
    struct link_msg m = {.type = LINK_PING};
    struct link_reply r = exchange(&m, true);
    if (r.status)
        armci_die(NULL, "the data server of node %d answered a ping with %s", topo.my_node,
                  strerror(r.status));
}

void server_link_stop(void)
{
    struct link_msg m = {.type = LINK_STOP};
    struct link_reply r = exchange(&m, true);
    if (r.status)
        armci_die("ARMCI_Finalize", "the data server of node %d refused to stop: %s", topo.my_node,
                  strerror(r.status));
}

void server_link_close(void)
{
    if (client_fd >= 0)
        close(client_fd);
    client_fd = -1;
}
