/*
 * Requests from a process to the data server of its own node (which may run
 * in another process): map and register a shared-memory object so that
 * other nodes can reach it. Implemented in dataserver/.
 */
#ifndef ARMCI_DATASERVER_LINK_H
#define ARMCI_DATASERVER_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Collective over the node's processes at init, before the data server starts:
 * the socket's secret name, the master's pid and (for the server) every local pid. */
void server_link_init(void);

/* The server maps `name` (size bytes) at `wanted` if that range is free in its process (0, or
 * taken: where the kernel chooses), registers it for remote access and returns the mapping's
 * address in its space and the rkey. A lock block holds only ARMCI mutexes: lock requests are
 * accepted there and nowhere else. */
void server_link_map_segment(uint64_t seg_id, const char *name, size_t size, bool lock_block,
                             uint64_t wanted, uint64_t *server_base, uint32_t *rkey);
void server_link_unmap_segment(uint64_t seg_id);

/* A request that only waits for the server's answer (tests: every peer is served). */
void server_link_ping(void);

/* Asks this node's data server to finish and exit its thread (master, at finalize). */
void server_link_stop(void);

/* Closes this process's end of the link (finalize, every process, after server_stop: the
 * master's own server array of local pids goes with server_fini). */
void server_link_close(void);

/* A same-node unlock handed a mutex to a waiter queued at the data server. */
void server_link_notify_unlock(void);

#endif
