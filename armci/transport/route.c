/* Choosing RDMA or the data server for a strided transfer (route.h). */
#include "transport/route.h"

#include "core/acc.h"
#include "core/config.h"
#include "core/mutant.h"
#include "core/util.h"
#include "strided/stride.h"
#include "transport/pieces.h"
#include "transport/transfer_desc.h"

/*
 * Microseconds per RDMA request (a chunk) and per data-server request, and
 * bytes per microsecond moved each way; a get through the server pays its
 * write back and the unpacking besides.
 */
struct route_costs {
    double rdma_request_us;
    double rdma_segment_us; /* a short segment in a chain of them (a vector's) */
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
 * the server's requests the same CPU time as here. rdma_rxe (and siw) between
 * the multi-host bed's hosts: a vector's short segment costs what softib's
 * does (the kernels packetize each one; GA's scatter of 10 elements to one
 * process took 3.4 ms as a chain of 10 RDMA writes, 1.45 ms as one request
 * to the server, 3 rounds), a strided chunk what an HCA's does (with softib's
 * constants ga_lu's patches went to the server and it ran 13 % longer).
 */
static const struct route_costs softib_costs = {0.45, 0.45, 10000, 1.5, 9.0, 9000, 20000};
static const struct route_costs hca_costs = {0.05, 0.05, 12000, 3.0, 9.0, 6000, 15000};
static struct route_costs costs;

void route_init(enum device_kind kind)
{
    costs = kind == DEVICE_SOFTIB ? softib_costs : hca_costs;
    if (kind == DEVICE_KERNEL) /* an HCA's, but a vector's segment as softib's */
        costs.rdma_segment_us = softib_costs.rdma_segment_us;
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

/*
 * Below this the user's memory is copied. A 64 KiB GA patch put from
 * registered memory takes the data server's pull or in-place gather and ran
 * at 0.3-0.8 of the same put copied; a 64 KiB patch got in place ran no
 * faster than through a bounce buffer (bench_ga_patch). From 256 KiB, gets
 * and puts in place gain (a 2 MiB patch got in place into malloc'd memory
 * ran at 1.2-1.8x the bounced get, at 2x on huge pages; 4 KiB aliasing, a
 * malloc'd buffer being 16 bytes past a page, costs the in-place copy up to
 * a third, not the several times it costs a bounce buffer's unpacking:
 * rdma_path.c, landing_offset), and there are few enough such buffers for
 * the cache to hold them.
 */
#define REGISTER_MIN_BYTES ((size_t)256 << 10)

bool route_register_local(size_t extent)
{
#if ARMCI_MUTANT_IS(register_local_never)
    return false;
#endif
    return extent >= REGISTER_MIN_BYTES;
}

size_t route_vector_threshold(void)
{
    return cfg.strided_threshold >= 0 ? (size_t)cfg.strided_threshold : 2048;
}

bool route_vector_via_rdma(const struct transfer *x, int per_request)
{
    if (x->op == TRANSFER_ACC || cfg.vector == CFG_VECTOR_SERVER)
        return false;
    if (cfg.vector == CFG_VECTOR_RDMA)
        return true;
    if (cfg.strided_threshold >= 0)
        return false;
    if (per_request < 2)
        return true;
    double n = (double)x->n, bytes = n * (double)x->bytes;
    double requests = (double)((x->n + per_request - 1) / per_request);
    double rdma = n * costs.rdma_segment_us + bytes / costs.rdma_bytes_per_us;
    double request_us = x->op == TRANSFER_GET ? costs.get_request_us : costs.put_request_us;
    double server = requests * request_us + bytes / costs.server_bytes_per_us;
    return rdma <= server; /* both copy every segment once on this side */
}

/* Chunks of a strided box that still go as datagrams (a request each); more go to RC, where
 * the server packs them or RDMA moves them without a header each. */
#define DGRAM_MAX_CHUNKS 64

bool route_via_datagram(const struct transfer *x, const struct dgram_facts *f)
{
    if (x->rc_only || f->rc_busy)
        return false;
    size_t len = x->locals ? x->bytes : (size_t)x->d.count[0];
    size_t pieces = x->locals ? (size_t)x->n : stride_chunks(x->d.count, x->d.levels);
    if (len == 0 || f->room == 0)
        return false;
    if (!x->locals && pieces > DGRAM_MAX_CHUNKS)
        return false;
    /* Pieces longer than a request are cut into requests while the whole stays within
     * f->segmented_max: a cold node's medium transfer costs no connection setup. */
    bool fits = len <= f->room;
#if ARMCI_MUTANT_IS(dgram_never_segmented)
    if (!fits)
        return false;
#endif
    if (!fits && len * pieces > f->segmented_max)
        return false;
    return f->ud_always || !f->rc_ready;
}

/* Rows shorter than this are packed by copying: cheaper than a gather entry each. */
#define GATHER_MIN_ROW 512

struct server_plan plan_server(const struct transfer *x, const struct box_facts *f, size_t unit)
{
    struct server_plan pl = {.max_bytes = f->request_room / unit * unit, .send_room = f->send_room};
    size_t row = (size_t)x->d.count[0];
    /* Short rows are copied, contiguous ones too: a copied request may share its SEND with the
     * next ones (send_queue.h), and a blocking caller need not wait for it to go. */
    if (!f->registered || row < GATHER_MIN_ROW)
        return pl;
    if (x->d.levels == 0 || row >= pl.max_bytes) {
        pl.in_place = true; /* every piece is one run: gathered, or pulled past a SEND */
        return pl;
    }
    if (f->max_sge < 3)
        return pl;
    /* Rows gathered by the SEND: as many as fit the server's request buffer. */
    size_t room = MIN(pl.max_bytes, f->send_room / unit * unit);
    size_t rows = MIN((size_t)f->max_sge - 1, room / row);
    pl.max_bytes = MIN(room, rows * row / unit * unit);
    pl.in_place = pl.max_bytes >= row;
    if (!pl.in_place)
        pl.max_bytes = f->request_room / unit * unit;
    return pl;
}

size_t pieces_of(const struct transfer *x, size_t max_bytes)
{
    size_t row = (size_t)x->d.count[0], chunks = stride_chunks(x->d.count, x->d.levels);
    if (row > max_bytes)
        return chunks * ((row + max_bytes - 1) / max_bytes);
    size_t per_piece = max_bytes / row;
    return (chunks + per_piece - 1) / per_piece;
}

size_t get_piece_bytes(const struct transfer *x, const struct box_facts *f)
{
    size_t piece = MIN(f->bounce_size, f->request_room);
    if (!f->direct)
        return piece;
    size_t rows = (size_t)f->server_gather;
    return MAX(piece, MIN(rows * (size_t)x->d.count[0], PIECE_MAX_BYTES));
}

size_t pull_piece_bytes(const struct transfer *x, const struct box_facts *f)
{
    return MIN((size_t)f->server_gather * (size_t)x->d.count[0], PIECE_MAX_BYTES);
}

/* A pull's answer is a round trip: below this many bytes a copy here costs less than waiting. */
#define PULL_MIN_BYTES ((size_t)64 << 10)

struct box_plan plan_box(const struct transfer *x, const struct box_facts *f)
{
    struct box_plan p = {.path = BOX_RDMA};
    if (x->op == TRANSFER_ACC) {
        p.path = BOX_SERVER_PUT;
        p.server = plan_server(x, f, acc_elem_size(x->datatype));
        return p;
    }
    /* Chunks of a request or more: the server would only cut them up. */
    if (x->d.levels == 0 || (size_t)x->d.count[0] > f->request_room)
        return p;
    /* A source or destination that is one registered run: the server moves the data itself. */
    size_t bytes = (size_t)x->d.count[0] * stride_chunks(x->d.count, x->d.levels);
    if (x->op == TRANSFER_PUT && f->direct && bytes >= PULL_MIN_BYTES) {
        p.piece_bytes = pull_piece_bytes(x, f);
        if (route_via_server(x, pieces_of(x, p.piece_bytes), true))
            p.path = BOX_SERVER_PULL;
        return p;
    }
    if (x->op == TRANSFER_PUT) {
        p.server = plan_server(x, f, 1);
        if (route_via_server(x, pieces_of(x, p.server.max_bytes), p.server.in_place))
            p.path = BOX_SERVER_PUT;
        return p;
    }
    p.piece_bytes = get_piece_bytes(x, f);
    if (route_via_server(x, pieces_of(x, p.piece_bytes), f->direct))
        p.path = BOX_SERVER_GET;
    return p;
}
