/*
 * Strided descriptors: count[0] contiguous bytes, repeated count[1] times
 * at stride[0], that block count[2] times at stride[1], and so on, for
 * stride_levels levels (0..ARMCI_MAX_STRIDE_LEVEL).
 */
#ifndef ARMCI_STRIDED_STRIDE_H
#define ARMCI_STRIDED_STRIDE_H

#include <stdbool.h>
#include <stddef.h>

#define ARMCI_MAX_STRIDE_LEVEL 8

struct stride_desc {
    int levels;
    const int *count;      /* [levels + 1], count[0] in bytes */
    const int *src_stride; /* [levels] */
    const int *dst_stride; /* [levels] */
};

/*
 * Aborts, naming call and argument, unless the descriptor is usable: levels
 * in range, no negative count, non-negative strides wherever a level is
 * stepped (count > 1). Overlapping chunks are allowed, as in GA's ARMCI.
 * Drops trailing levels of count 1 from *levels. False: a count is 0, so
 * there is nothing to move (strides and buffers are then not looked at).
 */
bool stride_check(const char *call, const int *src_stride, const int *dst_stride, const int *count,
                  int *levels);
/* Its two halves: levels and counts (trimming *levels), and one side's strides. */
bool stride_check_counts(const char *call, const int *count, int *levels);
void stride_check_side(const char *call, const char *arg, const int *stride, const int *count,
                       int levels);

/*
 * Non-fatal check of one side (for the data server): levels in range,
 * counts positive, strides of stepped levels non-negative, and neither the
 * packed size nor the extent overflowing a size_t.
 */
bool stride_side_valid(const int *stride, const int *count, int levels);

/* Bytes from the first to one past the last byte touched (SIZE_MAX if that overflows). */
size_t stride_extent(const int *stride, const int *count, int levels);

/* Number of contiguous chunks (count[1] * ... * count[levels]). */
size_t stride_chunks(const int *count, int levels);

/* Walks the chunks in order: chunk k starts at *src_off / *dst_off. */
struct stride_iter {
    const struct stride_desc *d;
    int idx[ARMCI_MAX_STRIDE_LEVEL + 1];
    size_t src_off;
    size_t dst_off;
    bool done;
};

void stride_iter_begin(struct stride_iter *it, const struct stride_desc *d);
void stride_iter_next(struct stride_iter *it);

/*
 * Splitting a transfer into pieces of at most max_bytes packed bytes, each
 * itself a strided box (whole lower levels, a run along the next one), so
 * that each fits one message to the data server.
 */
struct stride_piece {
    int levels;
    int count[ARMCI_MAX_STRIDE_LEVEL + 1];
    size_t src_off;
    size_t dst_off;
    size_t bytes;
};

struct stride_pieces {
    const struct stride_desc *d;
    int full; /* levels 1..full are whole in every piece */
    int rows; /* run length along level full + 1 */
    int idx[ARMCI_MAX_STRIDE_LEVEL + 1];
    bool done;
};

/* count[0] must not exceed max_bytes. */
void stride_pieces_begin(struct stride_pieces *p, const struct stride_desc *d, size_t max_bytes);
bool stride_pieces_next(struct stride_pieces *p, struct stride_piece *out);

/* Strides of a piece's packed (contiguous) image: packed[i] = count[0] * ... * count[i]. */
void stride_packed(const int *count, int levels, int *packed);

/* Copies every chunk from src to dst (both directly addressable). */
void stride_copy(const struct stride_desc *d, const char *src, char *dst);

#endif
