/*
 * How ARMCI_Rmw on longs is carried out: chosen once in ARMCI_Init, alike
 * on every rank (ARMCI_RMW and the device's atomic_cap, the lowest over
 * all ranks).
 *
 * ARMCI promises an Rmw atomic against every other Rmw on the same
 * location, from any process. A device with IBV_ATOMIC_HCA (softib, most
 * HCAs) makes its atomics atomic only against its own atomics, not against
 * the CPU's: then either no Rmw uses the device, or every one does, those
 * to the own node too, over a loopback connection to the own node's data
 * server (RMW_ROUTE_DEVICE). With IBV_ATOMIC_GLOB the CPU and the device
 * agree, so same-node Rmw stay CPU atomics (RMW_ROUTE_CPU_DEVICE).
 *
 * The int forms never use the device (rmw.c says why): same-node ones are
 * CPU atomics, the others go to the data server, which uses CPU atomics.
 */
#ifndef ARMCI_VERBS_ATOMICS_H
#define ARMCI_VERBS_ATOMICS_H

#include <stdbool.h>

enum rmw_route {
    RMW_ROUTE_SERVER,     /* same node: CPU atomics; other nodes: their data server */
    RMW_ROUTE_CPU_DEVICE, /* same node: CPU atomics; other nodes: device atomics */
    RMW_ROUTE_DEVICE,     /* every long Rmw by device atomics, same node by loopback */
};

extern enum rmw_route rmw_route;

/* Chooses the route (collective over the job, after net_init). */
void rmw_route_choose(void);

/* Whether clients connect to their own node's data server too (RMW_ROUTE_DEVICE). */
static inline bool rmw_route_loopback(void)
{
    return rmw_route == RMW_ROUTE_DEVICE;
}

const char *rmw_route_name(enum rmw_route r);

#endif
