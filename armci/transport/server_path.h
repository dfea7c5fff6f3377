/*
 * Transfers through the target node's data server: puts and accumulates
 * cut into pieces it scatters or applies (the payload gathered in place
 * from registered memory, or copied into the request), gets it gathers and
 * RDMA-writes back, and puts it pulls by RDMA read (DS_PUT_PULL). How a
 * transfer is cut (plan_server, pieces_of, ...) is what transfer.c prices
 * against the RDMA path (route.h).
 */
#ifndef ARMCI_TRANSPORT_SERVER_PATH_H
#define ARMCI_TRANSPORT_SERVER_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/handle.h"
#include "transport/transfer.h"

struct conn;

/* A pull's answer is a round trip: below this many bytes a copy here costs less than waiting. */
#define PULL_MIN_BYTES ((size_t)64 << 10)

/* How a put or accumulate goes through the data server: in place or copied, piece size. */
struct server_plan {
    bool in_place; /* the SENDs gather the user's rows (registered memory) */
    uint32_t lkey;
    size_t max_bytes; /* payload per request */
};

/*
 * x's local side goes out in place if it is registered and its rows long
 * enough to be worth a gather entry each; pieces are then cut so that their
 * rows fit the QP's gather list beside the header.
 */
struct server_plan plan_server(const struct conn *c, const struct transfer *x, size_t unit);

/* Requests x takes through the server with pieces of at most max_bytes. */
size_t pieces_of(const struct transfer *x, size_t max_bytes);

/* A get's pieces: a bounce buffer each, or, landing in place (`direct`), as many rows as the
 * server's gather list takes (it writes them in one RDMA write: the rows of 64 KiB requests
 * then). */
size_t get_piece_bytes(const struct conn *c, const struct transfer *x, bool direct);

/* A pulled put's pieces: as many rows as the server's gather list takes. */
size_t pull_piece_bytes(const struct conn *c, const struct transfer *x);

/* Puts and accumulates through the server as planned: a blocking call returns when the source
 * may be reused (copied, or sent). */
void server_put(struct conn *c, const struct transfer *x, const struct server_plan *pl,
                struct handle *req, bool blocking);

/*
 * Gets: the server gathers each piece and RDMA-writes it to us, straight
 * into the user's buffer when that is one registered run (nothing to
 * unpack), else into a bounce buffer unpacked on arrival.
 */
void get_packed(struct conn *c, const struct transfer *x, struct handle *req);

/*
 * A strided put whose source is one registered run (rkey): its requests
 * carry no data, the server RDMA-reads each piece straight into place (as
 * many rows as its gather list takes). The source belongs to the operation
 * until the server has read it, i.e. until it answers: a blocking put waits
 * for that (the put is then complete at the target too).
 */
void pull_put(struct conn *c, const struct transfer *x, uint32_t rkey, struct handle *req,
              bool blocking);

#endif
