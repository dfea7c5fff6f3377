/*
 * Which way a strided put or get to another node goes: RDMA (one request
 * per contiguous chunk, the target's CPU idle) or the data server (the
 * transfer cut into pieces of up to one request, scattered or gathered
 * there). Neither wins everywhere, and where the crossover lies depends on
 * the device: on an HCA a chain of RDMA requests costs little per chunk
 * (the NIC walks it), on softib each chunk is a page pinned by the kernel;
 * a request to the server costs its CPU, and copies where memory is not
 * registered.
 *
 * So each transfer is priced both ways with a small cost model, per chunk,
 * per request and per byte, whose constants come from measurements of the
 * device the job runs on (bench/strided.c: softib here; an HCA's are
 * published figures of the same kind, see docs/ENVIRONMENT.md), and takes
 * the cheaper. ARMCI_STRIDED_THRESHOLD=N replaces the model by the old
 * rule (chunks of at least N bytes by RDMA), e.g. 0 for all RDMA.
 */
#ifndef ARMCI_TRANSPORT_ROUTE_H
#define ARMCI_TRANSPORT_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

struct transfer;

/* Picks the model's constants for the device in use (verbs provider name). */
void route_init(const char *provider);

/*
 * True: x (a put or get with levels > 0) goes through the data server.
 * `pieces` is how many requests that would take, `in_place` whether its
 * payload moves without a copy on this side.
 */
bool route_via_server(const struct transfer *x, size_t pieces, bool in_place);

/* Vectors: segments shorter than this travel many to a request. */
size_t route_vector_threshold(void);

#endif
