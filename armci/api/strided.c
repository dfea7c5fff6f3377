/*
 * Strided put/get/accumulate (ARMCI_*S), their Nb forms, the flag variants
 * and armci_read/write_strided. Same-node targets are copied here through
 * shared memory; other nodes go to strided_remote.c.
 */
#include <string.h>

#include "core/acc.h"
#include "core/error.h"
#include "core/node_shared.h"
#include "api/profiling.h"
#include "transport/remote.h"
#include "api/user_handles.h"
#include "core/runtime.h"
#include "api/segment.h"
#include "api/sync.h"
#include "core/topology.h"
#include "armci.h"
#include "strided/stride.h"

enum strided_op { OP_PUT, OP_GET, OP_ACC };

struct strided_args {
    const char *call;
    enum strided_op op;
    int datatype; /* OP_ACC */
    void *scale;  /* OP_ACC */
    void *src;
    int *src_stride;
    void *dst;
    int *dst_stride;
    int *count;
    int levels;
    int proc;
};

static void acc_strided_local(const struct stride_desc *d, int datatype, const void *scale,
                              const char *src, char *dst, int proc)
{
    int local = topo_local_index(proc);
    node_acc_lock(local);
    struct stride_iter it;
    for (stride_iter_begin(&it, d); !it.done; stride_iter_next(&it))
        acc_apply(datatype, scale, dst + it.dst_off, src + it.src_off, (size_t)d->count[0]);
    node_acc_unlock(local);
}

static int do_strided(const struct strided_args *a, armci_hdl_t *hdl, bool blocking)
{
    rt_require_init(a->call);
    check_proc(a->call, "proc", a->proc);
    int levels = a->levels;
    if (!stride_check(a->call, a->src_stride, a->dst_stride, a->count, &levels))
        return 0; /* a zero count: nothing moves, as in ARMCI-MPI */
    /* The local side may not be NULL (or NULL plus an offset); the remote one is resolved. */
    if (a->op == OP_GET) {
        check_ptr(a->call, "src_ptr", a->src);
        check_local(a->call, "dst_ptr", a->dst);
    } else {
        check_local(a->call, "src_ptr", a->src);
        check_ptr(a->call, "dst_ptr", a->dst);
    }
    if (a->op == OP_ACC)
        acc_check(a->call, a->datatype, a->scale, a->count[0]);

    struct stride_desc d = {levels, a->count, a->src_stride, a->dst_stride};
    /* The remote side is dst for put/acc and src for get. */
    bool remote_is_dst = a->op != OP_GET;
    void *remote_ptr = remote_is_dst ? a->dst : a->src;
    const int *remote_stride = remote_is_dst ? a->dst_stride : a->src_stride;
    struct target t;
    seg_resolve(a->call, remote_is_dst ? "dst_ptr" : "src_ptr", a->proc, remote_ptr,
                stride_extent(remote_stride, a->count, levels), &t);

    if (t.local) {
        if (a->op == OP_PUT)
            stride_copy(&d, a->src, t.local);
        else if (a->op == OP_GET)
            stride_copy(&d, t.local, a->dst);
        else
            acc_strided_local(&d, a->datatype, a->scale, a->src, t.local, a->proc);
        return 0;
    }

    struct handle *req = handle_for(a->call, hdl);
    if (a->op == OP_PUT)
        strided_remote_put(&t, &d, a->src, req, blocking);
    else if (a->op == OP_GET)
        strided_remote_get(&t, &d, a->dst, req, blocking);
    else
        strided_remote_acc(&t, &d, a->datatype, a->scale, a->src, req, blocking);
    return 0;
}

#define STRIDED_ARGS(name, kind, dt, sc)                                                          \
    (struct strided_args)                                                                         \
    {                                                                                             \
        .call = name, .op = kind, .datatype = dt, .scale = sc, .src = src_ptr,                    \
        .src_stride = src_stride_ar, .dst = dst_ptr, .dst_stride = dst_stride_ar, .count = count, \
        .levels = stride_levels, .proc = proc                                                     \
    }

int PARMCI_PutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
                int stride_levels, int proc)
{
    struct strided_args a = STRIDED_ARGS("ARMCI_PutS", OP_PUT, 0, NULL);
    return do_strided(&a, NULL, true);
}
PROFILED(PutS)

int PARMCI_GetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
                int stride_levels, int proc)
{
    struct strided_args a = STRIDED_ARGS("ARMCI_GetS", OP_GET, 0, NULL);
    return do_strided(&a, NULL, true);
}
PROFILED(GetS)

int PARMCI_AccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
                int dst_stride_ar[], int count[], int stride_levels, int proc)
{
    struct strided_args a = STRIDED_ARGS("ARMCI_AccS", OP_ACC, datatype, scale);
    return do_strided(&a, NULL, true);
}
PROFILED(AccS)

int PARMCI_NbPutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc, armci_hdl_t *hdl)
{
    struct strided_args a = STRIDED_ARGS("ARMCI_NbPutS", OP_PUT, 0, NULL);
    return do_strided(&a, hdl, false);
}
PROFILED(NbPutS)

int PARMCI_NbGetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc, armci_hdl_t *hdl)
{
    struct strided_args a = STRIDED_ARGS("ARMCI_NbGetS", OP_GET, 0, NULL);
    return do_strided(&a, hdl, false);
}
PROFILED(NbGetS)

int PARMCI_NbAccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
                  int dst_stride_ar[], int count[], int stride_levels, int proc, armci_hdl_t *hdl)
{
    struct strided_args a = STRIDED_ARGS("ARMCI_NbAccS", OP_ACC, datatype, scale);
    return do_strided(&a, hdl, false);
}
PROFILED(NbAccS)

/* Writes the flag once the data before it is complete at the target. */
static void put_flag(const char *call, int *flag, int value, int proc)
{
    check_ptr(call, "flag", flag);
    struct target t;
    seg_resolve(call, "flag", proc, flag, sizeof(int), &t);
    if (t.local) {
        __atomic_store_n((int *)t.local, value, __ATOMIC_RELEASE);
        return;
    }
    remote_fence(t.node);
    remote_put(&t, &value, sizeof(int), handle_implicit(), true);
}

int PARMCI_PutS_flag(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                     int count[], int stride_levels, int *flag, int value, int proc)
{
    struct strided_args a = STRIDED_ARGS("ARMCI_PutS_flag", OP_PUT, 0, NULL);
    do_strided(&a, NULL, true);
    put_flag(a.call, flag, value, proc);
    return 0;
}
PROFILED(PutS_flag)

int PARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value, int proc)
{
    static const char call[] = "ARMCI_Put_flag";
    rt_require_init(call);
    check_proc(call, "proc", proc);
    if (size > 0)
        PARMCI_Put(src, dst, size, proc);
    else
        check_nonneg(call, "size", size);
    put_flag(call, flag, value, proc);
    return 0;
}
PROFILED(Put_flag)

/*
 * As in both references: armci_write_strided packs the strided region at
 * ptr into the contiguous buf, armci_read_strided unpacks buf into it.
 */
static void local_strided(const char *call, void *ptr, int levels, int stride_arr[], int count[],
                          char *buf, bool pack)
{
    if (!stride_check_counts(call, count, &levels))
        return;
    stride_check_side(call, "stride_arr", stride_arr, count, levels);
    check_local(call, "ptr", ptr);
    check_local(call, "buf", buf);
    /* The buffer side is contiguous: its strides are the natural ones. */
    int packed[ARMCI_MAX_STRIDE_LEVEL];
    stride_packed(count, levels, packed);
    struct stride_desc d = {levels, count, pack ? stride_arr : packed, pack ? packed : stride_arr};
    if (pack)
        stride_copy(&d, ptr, buf);
    else
        stride_copy(&d, buf, ptr);
}

void armci_write_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf)
{
    local_strided("armci_write_strided", ptr, stride_levels, stride_arr, count, buf, true);
}

void armci_read_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf)
{
    local_strided("armci_read_strided", ptr, stride_levels, stride_arr, count, buf, false);
}
