#define _GNU_SOURCE /* accept4 */
/*
 * The local link: processes of a node ask their data server (a thread of
 * the node's master, maybe in another process) to map and register new
 * segments, to re-check lock queues after a same-node unlock, and to stop.
 * It is an abstract-namespace unix SEQPACKET socket: message boundaries are
 * kept, nothing appears in the file system, and the server can sleep on it
 * together with its completion channel.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/error.h"
#include "core/runtime.h"
#include "dataserver/link.h"
#include "core/topology.h"
#include "core/util.h"
#include "dataserver/server_internal.h"

enum link_type { LINK_MAP = 1, LINK_UNMAP, LINK_NOTIFY_UNLOCK, LINK_STOP };

struct link_msg {
    int32_t type;
    int32_t pad;
    uint64_t seg_id;
    uint64_t size;
    char name[96];
};

struct link_reply {
    uint64_t server_base;
    uint32_t rkey;
    int32_t status;
};

static socklen_t link_address(struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    /* sun_path[0] == 0: the abstract namespace. */
    int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "armci-%s-ds%d", rt.job_id,
                     topo.my_node);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* ---- server side ---- */

static int listen_fd = -1;
static int *peers;
static int npeers, cappeers;

void link_listen(void)
{
    struct sockaddr_un sa;
    socklen_t len = link_address(&sa);
    listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, len) || listen(listen_fd, 64))
        armci_die("ARMCI_Init", "data server: cannot listen on its local socket: %s",
                  strerror(errno));
}

void link_close(void)
{
    for (int i = 0; i < npeers; i++)
        close(peers[i]);
    free(peers);
    peers = NULL;
    npeers = cappeers = 0;
    if (listen_fd >= 0)
        close(listen_fd);
    listen_fd = -1;
}

int link_pollfds(struct pollfd *fds, int max)
{
    int n = 0;
    if (listen_fd >= 0 && n < max)
        fds[n++] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
    for (int i = 0; i < npeers && n < max; i++)
        fds[n++] = (struct pollfd){.fd = peers[i], .events = POLLIN};
    return n;
}

static void drop_peer(int fd)
{
    close(fd);
    for (int i = 0; i < npeers; i++)
        if (peers[i] == fd)
            peers[i] = peers[--npeers];
}

static void serve(int fd)
{
    struct link_msg m;
    ssize_t got = recv(fd, &m, sizeof(m), 0);
    if (got <= 0) {
        drop_peer(fd); /* the process closed its end (finalize or exit) */
        return;
    }
    struct link_reply r = {0};
    switch (m.type) {
    case LINK_MAP:
        m.name[sizeof(m.name) - 1] = 0;
        registry_map(m.seg_id, m.name, m.size, &r.server_base, &r.rkey);
        break;
    case LINK_UNMAP:
        registry_unmap(m.seg_id);
        break;
    case LINK_NOTIFY_UNLOCK:
        locks_rescan();
        return; /* no answer expected */
    case LINK_STOP:
        server_set_stop();
        break;
    default:
        r.status = -1;
        break;
    }
    if (send(fd, &r, sizeof(r), MSG_NOSIGNAL) != sizeof(r))
        armci_warn("data server: cannot answer a local request: %s", strerror(errno));
}

void link_handle(const struct pollfd *fds, int n)
{
    for (int i = 0; i < n; i++) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        if (fds[i].fd != listen_fd) {
            serve(fds[i].fd);
            continue;
        }
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        if (npeers == cappeers) {
            cappeers = cappeers ? 2 * cappeers : 8;
            peers = xrealloc(peers, sizeof(int) * cappeers);
        }
        peers[npeers++] = fd;
    }
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
    return client_fd;
}

static struct link_reply exchange(const struct link_msg *m, bool wait_reply)
{
    int fd = connected_fd();
    struct link_reply r = {0};
    if (send(fd, m, sizeof(*m), MSG_NOSIGNAL) != sizeof(*m))
        armci_die(NULL, "sending to the data server of node %d failed: %s", topo.my_node,
                  strerror(errno));
    if (wait_reply && recv(fd, &r, sizeof(r), 0) != sizeof(r))
        armci_die(NULL, "the data server of node %d did not answer: %s", topo.my_node,
                  strerror(errno));
    return r;
}

void server_link_map_segment(uint64_t seg_id, const char *name, size_t size, uint64_t *server_base,
                             uint32_t *rkey)
{
    struct link_msg m = {.type = LINK_MAP, .seg_id = seg_id, .size = size};
    snprintf(m.name, sizeof(m.name), "%s", name);
    struct link_reply r = exchange(&m, true);
    *server_base = r.server_base;
    *rkey = r.rkey;
}

void server_link_unmap_segment(uint64_t seg_id)
{
    struct link_msg m = {.type = LINK_UNMAP, .seg_id = seg_id};
    exchange(&m, true);
}

void server_link_notify_unlock(void)
{
    if (topo.num_nodes <= 1)
        return; /* no data server: every locker is on this node */
    struct link_msg m = {.type = LINK_NOTIFY_UNLOCK};
    exchange(&m, false);
}

void server_link_stop(void)
{
    struct link_msg m = {.type = LINK_STOP};
    exchange(&m, true);
}

void server_link_close(void)
{
    if (client_fd >= 0)
        close(client_fd);
    client_fd = -1;
}
