/*
 * The one place device, port and GID are chosen (ARMCI_IB_DEVICE,
 * ARMCI_IB_PORT, ARMCI_IB_GID_INDEX), and how peers are addressed, so the
 * same code runs on InfiniBand (LIDs) and RoCE (GIDs, GRH required).
 */
#ifndef ARMCI_VERBS_DEVICE_H
#define ARMCI_VERBS_DEVICE_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

/* Who does the device's work: the route's cost model prices each apart (transport/route.c). */
enum device_kind {
    DEVICE_HCA,    /* a NIC: a chained work request costs it well under a microsecond */
    DEVICE_SOFTIB, /* softib: the posting process moves every work request */
    DEVICE_KERNEL, /* rdma_rxe, siw: the kernels of both hosts packetize every work request */
};

struct verbs_device {
    const char *provider; /* "rdma-core" or "softib" */
    char name[64];
    enum device_kind kind;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_device_attr attr;
    uint8_t port;
    uint16_t lid;
    enum ibv_mtu mtu;
    bool use_grh; /* RoCE (or a forced GID index): every address carries the GID */
    int gid_index;
    union ibv_gid gid;
};

/* How a peer's queue pair is reached; exchanged over MPI or the UD channel. */
struct verbs_addr {
    uint8_t gid[16];
    uint16_t lid;
    uint16_t pad;
    uint32_t qpn;
    uint32_t psn;
};

extern struct verbs_device vdev;

void verbs_device_open(void);
void verbs_device_close(void);

/* My address for queue pair qpn with initial packet sequence number psn. */
struct verbs_addr verbs_my_addr(uint32_t qpn, uint32_t psn);

/* The next asynchronous event of the device, without waiting; the caller acks it
 * (ibv_ack_async_event). False when there is none. */
bool verbs_next_async_event(struct ibv_async_event *ev);

/* The state of this process's port now (IBV_PORT_ACTIVE when it cannot be queried): a request
 * that failed while it is down failed for this end's link, not for the peer's. */
enum ibv_port_state verbs_port_state(void);

/* Address vector towards `peer` (for RTR and for UD address handles). */
void verbs_fill_ah_attr(struct ibv_ah_attr *ah, const struct verbs_addr *peer);

/* Teardown: each verb's failure is reported (naming `who`), never fatal at finalize. */
void verbs_destroy_srq(struct ibv_srq *srq, const char *who);
void verbs_destroy_cq(struct ibv_cq *cq, const char *who);
void verbs_destroy_channel(struct ibv_comp_channel *ch, const char *who);

#endif
