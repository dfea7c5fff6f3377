/*
 * Transfers through the target node's data server: puts and accumulates
 * cut into pieces it scatters or applies (the payload gathered in place
 * from registered memory, or copied into the request), gets it gathers and
 * RDMA-writes back, and puts it pulls by RDMA read (DS_PUT_PULL). Which
 * of them a transfer takes, and how it is cut, is planned by route.h. The
 * client side names them via_server_*; server_* names are the data server's.
 */
#ifndef ARMCI_TRANSPORT_SERVER_PATH_H
#define ARMCI_TRANSPORT_SERVER_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/handle.h"
#include "transport/route.h"
#include "transport/transfer_desc.h"

struct conn;

/* Puts and accumulates through the server as planned: a blocking call returns when the source
 * may be reused (copied, or sent). */
void via_server_put(struct conn *c, const struct transfer *x, const struct server_plan *pl,
                    struct handle *req, bool blocking);

/*
 * Gets in pieces of piece_bytes: the server gathers each piece and
 * RDMA-writes it to us, straight into the user's buffer when that is one
 * registered run (`direct`, rkey), else into a bounce buffer unpacked on
 * arrival.
 */
void via_server_get(struct conn *c, const struct transfer *x, size_t piece_bytes, bool direct,
                    uint32_t rkey, struct handle *req);

/*
 * A strided put whose source is one registered run (rkey): its requests
 * carry no data, the server RDMA-reads each piece straight into place (as
 * many rows as its gather list takes). The source belongs to the operation
 * until the server has read it, i.e. until it answers: a blocking put waits
 * for that (the put is then complete at the target too).
 */
void via_server_pull(struct conn *c, const struct transfer *x, size_t piece_bytes, uint32_t rkey,
                     struct handle *req, bool blocking);

#endif
