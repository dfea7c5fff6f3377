/*
 * A transfer's strided box, walked in pieces: boxes of at most max_bytes
 * packed bytes (one bounce buffer, or one request to the data server), rows
 * longer than that split too. The RDMA path and the server path both cut
 * transfers this way, and pack or unpack pieces between the user's memory
 * and a buffer.
 */
#ifndef ARMCI_TRANSPORT_PIECES_H
#define ARMCI_TRANSPORT_PIECES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"
#include "core/util.h"
#include "strided/stride.h"
#include "transport/requests.h"
#include "transport/transfer_desc.h"

struct pool_buffer;
struct work;

/* The largest piece the data server moves with one RDMA for us (a gathered get landing in
 * place, a pulled put): however many rows its gather list takes, one request does not keep
 * the server longer than this many bytes. */
#define PIECE_MAX_BYTES ((size_t)1 << 20)

/* The local and remote strides of a box transfer, whichever way it goes. */
static inline const int *local_strides(const struct transfer *x)
{
    return x->op == TRANSFER_GET ? x->d.dst_stride : x->d.src_stride;
}

static inline const int *remote_strides(const struct transfer *x)
{
    return x->op == TRANSFER_GET ? x->d.src_stride : x->d.dst_stride;
}
/* Whether x's local side is one contiguous run (its strides are those of its packed image). */
bool local_contiguous(const struct transfer *x);

/* A vector get's k segments of `bytes` each, packed back to back in a buffer, scattered to
 * dst[0..k-1] when they have arrived: the ctx of a work whose on_done is scatter_on_arrival,
 * which copies them out of the work's data buffer and frees the ctx. */
struct scatter_ctx *scatter_ctx_new(void *const *dst, int k, size_t bytes);
void scatter_on_arrival(struct work *f);

/*
 * Wraps stride_pieces so that rows longer than max_bytes are split too
 * (into runs of whole `unit`s: an accumulate never splits an element).
 * Offsets are local (src_off) and remote (dst_off).
 */
struct piece_walk {
    struct stride_desc by_side; /* local strides as src, remote as dst */
    size_t max_bytes;
    size_t unit;
    bool split_rows;
    struct stride_pieces pieces; /* rows that fit */
    struct stride_iter rows;     /* rows that do not */
    size_t row_off;
};

void piece_walk_begin(struct piece_walk *w, const struct transfer *x, size_t max_bytes,
                      size_t unit);
bool piece_walk_next(struct piece_walk *w, struct stride_piece *p);

/* Copies a piece between user memory (with `strides`) and its packed image. */
void pack_piece(const struct stride_piece *p, const int *strides, const char *from, char *to,
                bool packing);

/* Where piece p read into a bounce buffer goes (dst, with `strides`): the ctx of a work whose
 * on_done is unpack_on_arrival, which unpacks the work's data buffer and frees the ctx. */
struct unpack_ctx *unpack_ctx_new(const struct stride_piece *p, const int *strides, char *dst);
void unpack_on_arrival(struct work *f);

/* Work f reads piece p into `data`, `at` bytes into it; when it completes, the piece is
 * unpacked to dst (with the local `strides`). */
void unpack_on_completion(struct work *f, struct pool_buffer *data, size_t at,
                          const struct stride_piece *p, const int *strides, char *dst);

#endif
