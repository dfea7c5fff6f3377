#include "strided/stride.h"
#include "core/mutant.h"

#include <stdint.h>
#include <string.h>

#include "core/error.h"

/* a * b + c, or false if it does not fit a size_t. */
static bool mul_add(size_t a, size_t b, size_t c, size_t *out)
{
    size_t p;
    return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(p, c, out);
}

/* The extent of one side, or false if it overflows; strides of count-1 levels are not used. */
static bool extent_of(const int *stride, const int *count, int levels, size_t *extent)
{
    *extent = (size_t)count[0];
    for (int i = 0; i < levels; i++)
        if (count[i + 1] > 1 &&
            !mul_add((size_t)(count[i + 1] - 1), (size_t)stride[i], *extent, extent))
            return false;
    return true;
}

void stride_check_side(const char *call, const char *arg, const int *stride, const int *count,
                       int levels)
{
    if (levels == 0)
        return;
    check_ptr(call, arg, stride);
    for (int i = 0; i < levels; i++)
        if (count[i + 1] > 1 && stride[i] < 0)
            armci_die(call, "argument %s[%d]=%d is negative", arg, i, stride[i]);
    size_t extent;
    if (!extent_of(stride, count, levels, &extent))
        armci_die(call, "argument %s: the region it describes does not fit in memory", arg);
}

bool stride_check_counts(const char *call, const int *count, int *levels)
{
    if (*levels < 0 || *levels > ARMCI_MAX_STRIDE_LEVEL)
        armci_die(call, "argument stride_levels=%d is not in [0, %d]", *levels,
                  ARMCI_MAX_STRIDE_LEVEL);
    check_ptr(call, "count", count);
    bool empty = false;
    for (int i = 0; i <= *levels; i++) {
        if (count[i] < 0)
            armci_die(call, "argument count[%d]=%d is negative", i, count[i]);
        empty |= count[i] == 0;
    }
    if (empty)
        return false;
    /* Trailing levels of count 1 add nothing: both references drop them too. */
    while (*levels > 0 && count[*levels] == 1)
        (*levels)--;
    return true;
}

bool stride_check(const char *call, const int *src_stride, const int *dst_stride, const int *count,
                  int *levels)
{
    if (!stride_check_counts(call, count, levels))
        return false;
    stride_check_side(call, "src_stride_arr", src_stride, count, *levels);
    stride_check_side(call, "dst_stride_arr", dst_stride, count, *levels);
    return true;
}

bool stride_side_valid(const int *stride, const int *count, int levels)
{
    if (levels < 0 || levels > ARMCI_MAX_STRIDE_LEVEL)
        return false;
    size_t packed = 1;
    for (int i = 0; i <= levels; i++) {
        if (count[i] <= 0 || !mul_add(packed, (size_t)count[i], 0, &packed))
            return false;
        if (i > 0 && count[i] > 1 && stride[i - 1] < 0)
            return false;
    }
    size_t extent;
    return extent_of(stride, count, levels, &extent);
}

size_t stride_extent(const int *stride, const int *count, int levels)
{
    size_t extent;
    return extent_of(stride, count, levels, &extent) ? extent : SIZE_MAX;
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
#if ARMCI_MUTANT_IS(stride_ignored)
        if (i == 2)
            dst_step = d->dst_stride ? (size_t)d->dst_stride[0] : 0;
#endif
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
#if ARMCI_MUTANT_IS(stride_ignored)
        if (i == 2) {
            out->dst_off += (size_t)p->idx[i] * (size_t)d->dst_stride[0];
            continue;
        }
#endif
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
