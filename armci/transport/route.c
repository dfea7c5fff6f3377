/* Choosing RDMA or the data server for a strided transfer (route.h). */
#include "transport/route.h"

#include <string.h>

#include "core/config.h"
#include "strided/stride.h"
#include "transport/transfer.h"

/*
 * Microseconds per RDMA request (a chunk) and per data-server request, and
 * bytes per microsecond moved each way; a get through the server pays its
 * write back and the unpacking besides.
 */
struct route_costs {
    double rdma_request_us;
    double rdma_bytes_per_us;
    double put_request_us; /* a put or accumulate request to the server */
    double get_request_us; /* a get request: the server gathers and writes back */
    double server_bytes_per_us;
    double copy_bytes_per_us; /* packing or unpacking on this side */
};

/*
 * softib, measured here (bench/strided.c, 2-core VM): a chunk costs the
 * kernel a page pinning per request, a server request a few microseconds.
 * An HCA: a chained RDMA request costs the NIC well under a microsecond,
 * the server's requests the same CPU time as here.
 */
static const struct route_costs softib_costs = {0.45, 10000, 1.5, 9.0, 9000, 20000};
static const struct route_costs hca_costs = {0.05, 12000, 3.0, 9.0, 6000, 15000};
static struct route_costs costs;

void route_init(const char *provider)
{
    costs = provider && !strcmp(provider, "softib") ? softib_costs : hca_costs;
}

bool route_via_server(const struct transfer *x, size_t pieces, bool in_place)
{
    size_t row = (size_t)x->d.count[0];
    if (cfg.strided_threshold >= 0)
        return row < (size_t)cfg.strided_threshold;
    size_t chunks = stride_chunks(x->d.count, x->d.levels);
    double bytes = (double)row * (double)chunks;
    double rdma = (double)chunks * costs.rdma_request_us + bytes / costs.rdma_bytes_per_us;
    bool get = x->op == TRANSFER_GET;
    double server = (double)pieces * (get ? costs.get_request_us : costs.put_request_us) +
                    bytes / costs.server_bytes_per_us;
    if (!in_place)
        server += bytes / costs.copy_bytes_per_us;
    return server < rdma;
}

size_t route_vector_threshold(void)
{
    return cfg.strided_threshold >= 0 ? (size_t)cfg.strided_threshold : 2048;
}
