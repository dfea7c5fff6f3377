/*
 * Pieces (pieces.h): a transfer's box cut into boxes of at most a bounce
 * buffer or a request, and their packing to and from those buffers.
 */
#include "transport/pieces.h"

#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/mutant.h"
#include "core/util.h"
#include "transport/work.h"

/* Room for packed data in one request to the data server. */
void piece_walk_begin(struct piece_walk *w, const struct transfer *x, size_t max_bytes, size_t unit)
{
    w->by_side = (struct stride_desc){x->d.levels, x->d.count, local_strides(x), remote_strides(x)};
    w->unit = unit;
    w->max_bytes = max_bytes / unit * unit;
    w->split_rows = (size_t)x->d.count[0] > w->max_bytes;
    w->row_off = 0;
    if (w->split_rows)
        stride_iter_begin(&w->rows, &w->by_side);
    else
        stride_pieces_begin(&w->pieces, &w->by_side, w->max_bytes);
}

bool piece_walk_next(struct piece_walk *w, struct stride_piece *p)
{
    if (!w->split_rows)
        return stride_pieces_next(&w->pieces, p);
    if (w->rows.done)
        return false;
    size_t row = (size_t)w->by_side.count[0];
    size_t n = MIN(w->max_bytes, row - w->row_off);
    *p = (struct stride_piece){.levels = 0,
                               .count = {(int)n},
                               .src_off = w->rows.src_off + w->row_off,
                               .dst_off = w->rows.dst_off + w->row_off,
                               .bytes = n};
    w->row_off += n;
    if (w->row_off == row) {
        w->row_off = 0;
        stride_iter_next(&w->rows);
    }
    return true;
}

void pack_piece(const struct stride_piece *p, const int *strides, const char *from, char *to,
                bool packing)
{
    int packed[ARMCI_MAX_STRIDE_LEVEL];
    stride_packed(p->count, p->levels, packed);
    struct stride_desc d = {p->levels, p->count, packing ? strides : packed,
                            packing ? packed : strides};
    stride_copy(&d, from, to);
}

/* Where a piece read into a bounce buffer goes when its data has arrived. */
struct unpack_ctx {
    struct stride_piece piece;
    int strides[ARMCI_MAX_STRIDE_LEVEL];
    char *dst;
    size_t at; /* where the piece starts in the data buffer */
};

struct unpack_ctx *unpack_ctx_new(const struct stride_piece *p, const int *strides, char *dst)
{
    struct unpack_ctx *u = xmalloc(sizeof(*u));
    u->piece = *p;
    memcpy(u->strides, strides, sizeof(int) * (size_t)p->levels);
    u->dst = dst;
    u->at = 0;
    return u;
}

void unpack_on_arrival(struct work *f)
{
    struct unpack_ctx *u = f->ctx;
    pack_piece(&u->piece, u->strides, (char *)f->data->addr + u->at, u->dst, false);
    free(u);
}

void unpack_on_completion(struct work *f, struct pool_buffer *data, size_t at,
                          const struct stride_piece *p, const int *strides, char *dst)
{
    f->data = data;
    f->on_done = unpack_on_arrival;
    struct unpack_ctx *u = unpack_ctx_new(p, strides, dst);
    u->at = at;
    f->ctx = u;
}

struct scatter_ctx {
    int k;
    size_t bytes;
    void *dst[];
};

struct scatter_ctx *scatter_ctx_new(void *const *dst, int k, size_t bytes)
{
    struct scatter_ctx *s = xmalloc(sizeof(*s) + sizeof(void *) * (size_t)k);
    s->k = k;
    s->bytes = bytes;
    memcpy(s->dst, dst, sizeof(void *) * (size_t)k);
    return s;
}

void scatter_on_arrival(struct work *f)
{
    struct scatter_ctx *s = f->ctx;
    for (int i = 0; i < s->k; i++) {
        size_t slot = (size_t)i;
#if ARMCI_MUTANT_IS(vector_scatter_shifted)
        slot = (slot + 1) % (size_t)s->k;
#endif
        memcpy(s->dst[i], (char *)f->data->addr + slot * s->bytes, s->bytes);
    }
    free(s);
}

bool local_contiguous(const struct transfer *x)
{
    int packed[ARMCI_MAX_STRIDE_LEVEL];
    stride_packed(x->d.count, x->d.levels, packed);
    const int *strides = local_strides(x);
    for (int i = 0; i < x->d.levels; i++)
        if (x->d.count[i + 1] > 1 && strides[i] != packed[i])
            return false;
    return true;
}
