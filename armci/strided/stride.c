#include "stride.h"

#include <string.h>

#include "../error.h"

void stride_check(const char *call, const int *src_stride, const int *dst_stride, const int *count,
                  int levels)
{
    if (levels < 0 || levels > ARMCI_MAX_STRIDE_LEVEL)
        armci_die(call, "argument stride_levels=%d is not in [0, %d]", levels,
                  ARMCI_MAX_STRIDE_LEVEL);
    check_ptr(call, "count", count);
    if (levels > 0) {
        check_ptr(call, "src_stride_arr", src_stride);
        check_ptr(call, "dst_stride_arr", dst_stride);
    }
    for (int i = 0; i <= levels; i++)
        if (count[i] <= 0)
            armci_die(call, "argument count[%d]=%d is not positive", i, count[i]);

    /* Each level must step over the whole level below, or chunks would overlap. */
    long src_extent = count[0], dst_extent = count[0];
    for (int i = 0; i < levels; i++) {
        if (src_stride[i] < src_extent)
            armci_die(call,
                      "argument src_stride_arr[%d]=%d is smaller than the %ld bytes of "
                      "the level below",
                      i, src_stride[i], src_extent);
        if (dst_stride[i] < dst_extent)
            armci_die(call,
                      "argument dst_stride_arr[%d]=%d is smaller than the %ld bytes of "
                      "the level below",
                      i, dst_stride[i], dst_extent);
        src_extent = (long)src_stride[i] * count[i + 1];
        dst_extent = (long)dst_stride[i] * count[i + 1];
    }
}

bool stride_side_valid(const int *stride, const int *count, int levels)
{
    if (levels < 0 || levels > ARMCI_MAX_STRIDE_LEVEL)
        return false;
    long extent = 0;
    for (int i = 0; i <= levels; i++) {
        if (count[i] <= 0)
            return false;
        if (i > 0 && stride[i - 1] < extent)
            return false;
        extent = i == 0 ? count[0] : (long)stride[i - 1] * count[i];
    }
    return true;
}

size_t stride_extent(const int *stride, const int *count, int levels)
{
    size_t extent = (size_t)count[0];
    for (int i = 0; i < levels; i++)
        extent += (size_t)(count[i + 1] - 1) * (size_t)stride[i];
    return extent;
}

size_t stride_chunks(const int *count, int levels)
{
    size_t n = 1;
    for (int i = 1; i <= levels; i++)
        n *= (size_t)count[i];
    return n;
}

void stride_iter_begin(struct stride_iter *it, const struct stride_desc *d)
{
    it->d = d;
    memset(it->idx, 0, sizeof(it->idx));
    it->src_off = 0;
    it->dst_off = 0;
    it->done = false;
}

void stride_iter_next(struct stride_iter *it)
{
    const struct stride_desc *d = it->d;
    /* Odometer over levels 1..levels; level i advances by stride[i - 1]. */
    for (int i = 1; i <= d->levels; i++) {
        size_t src_step = d->src_stride ? (size_t)d->src_stride[i - 1] : 0;
        size_t dst_step = d->dst_stride ? (size_t)d->dst_stride[i - 1] : 0;
        if (++it->idx[i] < d->count[i]) {
            it->src_off += src_step;
            it->dst_off += dst_step;
            return;
        }
        it->idx[i] = 0;
        it->src_off -= src_step * (size_t)(d->count[i] - 1);
        it->dst_off -= dst_step * (size_t)(d->count[i] - 1);
    }
    it->done = true;
}

void stride_copy(const struct stride_desc *d, const char *src, char *dst)
{
    size_t len = (size_t)d->count[0];
    struct stride_iter it;
    for (stride_iter_begin(&it, d); !it.done; stride_iter_next(&it))
        memmove(dst + it.dst_off, src + it.src_off, len);
}

void stride_packed(const int *count, int levels, int *packed)
{
    for (int i = 0; i < levels; i++)
        packed[i] = i == 0 ? count[0] : packed[i - 1] * count[i];
}

void stride_pieces_begin(struct stride_pieces *p, const struct stride_desc *d, size_t max_bytes)
{
    memset(p, 0, sizeof(*p));
    p->d = d;
    size_t inner = (size_t)d->count[0];
    while (p->full < d->levels && inner * (size_t)d->count[p->full + 1] <= max_bytes)
        inner *= (size_t)d->count[++p->full];
    if (p->full < d->levels) {
        size_t fit = max_bytes / inner;
        p->rows = (int)(fit < (size_t)d->count[p->full + 1] ? fit : (size_t)d->count[p->full + 1]);
    }
}

bool stride_pieces_next(struct stride_pieces *p, struct stride_piece *out)
{
    const struct stride_desc *d = p->d;
    if (p->done)
        return false;
    memset(out, 0, sizeof(*out));
    int run_level = p->full + 1;
    out->levels = p->full < d->levels ? run_level : d->levels;
    out->bytes = 1;
    for (int i = 0; i <= out->levels; i++) {
        out->count[i] = d->count[i];
        if (i == run_level) {
            int left = d->count[i] - p->idx[i];
            out->count[i] = left < p->rows ? left : p->rows;
        }
        out->bytes *= (size_t)out->count[i];
    }
    for (int i = run_level; i <= d->levels; i++) {
        out->src_off += (size_t)p->idx[i] * (size_t)d->src_stride[i - 1];
        out->dst_off += (size_t)p->idx[i] * (size_t)d->dst_stride[i - 1];
    }
    /* Advance: the run along run_level, then the odometer above it. */
    p->done = true;
    for (int i = run_level; i <= d->levels; i++) {
        p->idx[i] += i == run_level ? p->rows : 1;
        if (p->idx[i] < d->count[i]) {
            p->done = false;
            break;
        }
        p->idx[i] = 0;
    }
    return true;
}
