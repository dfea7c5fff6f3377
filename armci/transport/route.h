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
 * Accumulates always go to the server (it applies them under the target's
 * accumulate lock); chunks of a request or more, and contiguous puts and
 * gets, always by RDMA (the server would only cut them up).
 */
#ifndef ARMCI_TRANSPORT_ROUTE_H
#define ARMCI_TRANSPORT_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verbs/device.h"

struct transfer;

/* Picks the model's constants for the kind of device in use. */
void route_init(enum device_kind kind);

/*
 * True: x (a put or get with levels > 0) goes through the data server.
 * `pieces` is how many requests that would take, `in_place` whether its
 * payload moves without a copy on this side.
 */
bool route_via_server(const struct transfer *x, size_t pieces, bool in_place);

/*
 * Whether a transfer's local memory, where ARMCI did not register it (GA's
 * local arrays: malloc'd, static, on the stack), is registered through the
 * cache (verbs/reg_cache.h, on devices where it is on) so that the transfer
 * moves zero-copy, rather than copied through bounce buffers. `extent`: the
 * bytes its local side spans. Puts, accumulates and gets alike.
 */
bool route_register_local(size_t extent);

/* Vectors: segments shorter than this travel many to a request, or in one chain of RDMA. */
size_t route_vector_threshold(void);

/*
 * How a vector put or get of short segments (route_vector_threshold) goes:
 * a chain of RDMA writes or reads, one per segment (vector_rdma.h), or
 * packed `per_request` segments to a request to the data server
 * (vector_path.h). Priced like strided shapes: a request per segment
 * against a request per `per_request` segments and the server's wake-up,
 * with the copies each side makes. Few segments take the chain (GA's
 * NGA_Gather and NGA_Scatter), many the server. Accumulates always go to
 * the server. ARMCI_VECTOR=rdma or server forces one way (tests,
 * comparisons); ARMCI_STRIDED_THRESHOLD=N keeps the old rule: segments
 * shorter than N bytes to the server, the others one by one.
 */
bool route_vector_via_rdma(const struct transfer *x, int per_request);

/*
 * The hybrid UD data path (dgram.h): whether x goes to its node as
 * datagrams, when the node has no ready RC connection (or always,
 * ARMCI_HYBRID=ud): a request per contiguous piece (a vector's segments, a
 * strided box's chunks, up to 64), a piece longer than one request cut into
 * several while the whole transfer stays within f->segmented_max; larger
 * transfers open RC as before. A node's
 * traffic stays on the path it is on while that path has operations in
 * flight, so nothing overtakes: RC operations in flight or queued keep
 * small ones on RC, and the caller drains the node's UD requests before
 * its first RC operation (ARMCI's ordering of a process's operations to one
 * node holds across the two paths).
 */
struct dgram_facts {
    bool ud_always; /* ARMCI_HYBRID=ud */
    bool rc_ready;  /* the node has a ready RC connection */
    bool rc_busy;   /* operations are in flight or queued on it */
    size_t room;    /* bytes of x one request carries (dgram_room: whole elements) */
    /* Bytes a transfer may have over UD when its pieces must be cut into several requests each
     * (ARMCI_HYBRID_SEGMENTED; docs/SCALING.md, "Medium transfers over UD", measures it). */
    size_t segmented_max;
};
bool route_via_datagram(const struct transfer *x, const struct dgram_facts *f);

/*
 * The whole choice for one box (a put, get or accumulate of a strided box,
 * levels 0 included), as a plain function of the transfer and of what
 * issue_box finds out about the connection and the local memory, so that
 * it can be tested without a job (tests/core/test_route_plan.c).
 */
struct box_facts {
    size_t request_room; /* packed bytes one request to the data server carries (pulled) */
    size_t send_room;    /* of which one SEND carries (rows gathered in place) */
    size_t bounce_size;  /* bytes of a bounce buffer */
    int max_sge;         /* gather entries per send on our QP */
    int server_gather;   /* gather entries per RDMA write or read of the server's QP */
    bool registered;     /* the local extent is registered: a send may gather it in place */
    bool direct;         /* it is also one contiguous run the server may RDMA to or from */
};

enum box_path {
    BOX_RDMA,        /* RDMA writes or reads (rdma_path.c) */
    BOX_SERVER_PUT,  /* put or accumulate packed into requests (server_path.c via_server_put) */
    BOX_SERVER_PULL, /* put the server RDMA-reads from our registered run (via_server_pull) */
    BOX_SERVER_GET,  /* get the server gathers and writes back (via_server_get) */
};

/* How a put or accumulate goes through the data server: in place or copied, piece size. */
struct server_plan {
    bool in_place;    /* the SENDs gather the user's rows (registered memory), or the server
                         pulls a piece of one run past send_room */
    uint32_t lkey;    /* of the user's memory, when in place (filled by the caller) */
    uint32_t rkey;    /* the same, for the server's pulls */
    size_t send_room; /* payload a SEND carries: larger pieces are pulled */
    size_t max_bytes; /* payload per request */
};

struct box_plan {
    enum box_path path;
    struct server_plan server; /* BOX_SERVER_PUT: in place or copied, bytes per request */
    size_t piece_bytes;        /* BOX_SERVER_PULL, BOX_SERVER_GET: bytes per request */
};

struct box_plan plan_box(const struct transfer *x, const struct box_facts *f);

/*
 * A put's or accumulate's local side goes out in place if it is registered
 * and its rows long enough to be worth a gather entry each; pieces are then
 * cut so that their rows fit the QP's gather list beside the header.
 * `unit`: an accumulate's element size (pieces never split one), else 1.
 */
struct server_plan plan_server(const struct transfer *x, const struct box_facts *f, size_t unit);

/* Requests x takes through the server with pieces of at most max_bytes. */
size_t pieces_of(const struct transfer *x, size_t max_bytes);

/* A get's pieces: a bounce buffer each, or, landing in place (f->direct), as many rows as the
 * server's gather list takes (it writes them in one RDMA write). */
size_t get_piece_bytes(const struct transfer *x, const struct box_facts *f);

/* A pulled put's pieces: as many rows as the server's gather list takes. */
size_t pull_piece_bytes(const struct transfer *x, const struct box_facts *f);

#endif
