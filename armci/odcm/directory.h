/*
 * Where every process's UD endpoint is (and every node's data-server UD
 * endpoint): all-gathered once at init; O(processes) small records, the
 * only per-process state on-demand mode keeps for peers it never talks to.
 */
#ifndef ARMCI_ODCM_DIRECTORY_H
#define ARMCI_ODCM_DIRECTORY_H

#include <stdint.h>

#include "verbs/device.h"

/* Collective: publishes my client UD address (and my server's, if I am a master). */
void directory_publish(struct verbs_addr client_ud);
void directory_fini(void);

struct verbs_addr directory_server(int node);
struct verbs_addr directory_client(int rank);

#endif
