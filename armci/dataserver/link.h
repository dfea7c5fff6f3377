/*
 * Requests from a process to the data server of its own node (which may run
 * in another process): map and register a shared-memory object so that
 * other nodes can reach it. Implemented in dataserver/.
 */
#ifndef ARMCI_SERVER_LINK_H
#define ARMCI_SERVER_LINK_H

#include <stddef.h>
#include <stdint.h>

/* The server maps `name` (size bytes), registers it for remote access and
 * returns the mapping's address in its space and the rkey. */
void server_link_map_segment(uint64_t seg_id, const char *name, size_t size, uint64_t *server_base,
                             uint32_t *rkey);
void server_link_unmap_segment(uint64_t seg_id);

/* Asks this node's data server to finish and exit its thread (master, at finalize). */
void server_link_stop(void);

/* Closes this process's end of the link (finalize). */
void server_link_close(void);

/* A same-node unlock handed a mutex to a waiter queued at the data server. */
void server_link_notify_unlock(void);

#endif
