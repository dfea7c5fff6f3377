/* Where a range of another process's segment really is (seg_resolve fills it in). */
#ifndef ARMCI_TRANSPORT_TARGET_H
#define ARMCI_TRANSPORT_TARGET_H

#include <stdint.h>

struct target {
    void *local;          /* non-NULL: same node, load/store here */
    uint64_t server_addr; /* address in its node's data server's space (same node too) */
    uint32_t rkey;
    int proc;
    int node;
};

#endif
