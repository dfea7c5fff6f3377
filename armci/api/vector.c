/*
 * Generalised I/O vector operations (ARMCI_PutV/GetV/AccV and Nb forms):
 * every descriptor is a list of equal-sized segments. Same-node targets
 * are copied here; other nodes go to vector_remote.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/acc.h"
#include "core/mutant.h"
#include "core/error.h"
#include "core/node_shared.h"
#include "api/profiling.h"
#include "core/runtime.h"
#include "api/segment.h"
#include "core/topology.h"
#include "core/util.h"
#include "armci.h"
#include "api/user_handles.h"
#include "transport/remote.h"

enum vector_op { VOP_PUT, VOP_GET, VOP_ACC };

/* Nothing to move in this descriptor: zero segments or zero bytes (ARMCI-MPI skips it). */
static bool iov_empty(const armci_giov_t *v)
{
    return v->ptr_array_len == 0 || v->bytes == 0;
}

static void check_iov(const char *call, const armci_giov_t *iov, int iov_len)
{
    check_nonneg(call, "iov_len", iov_len);
    if (iov_len)
        check_ptr(call, "iov", iov);
    for (int i = 0; i < iov_len; i++) {
        if (iov[i].bytes < 0)
            armci_die(call, "argument iov[%d].bytes=%d is negative", i, iov[i].bytes);
        if (iov[i].ptr_array_len < 0)
            armci_die(call, "argument iov[%d].ptr_array_len=%d is negative", i,
                      iov[i].ptr_array_len);
        if (iov_empty(&iov[i]))
            continue;
        if (!iov[i].src_ptr_array)
            armci_die(call, "argument iov[%d].src_ptr_array is a null pointer", i);
        if (!iov[i].dst_ptr_array)
            armci_die(call, "argument iov[%d].dst_ptr_array is a null pointer", i);
    }
}

/* Every local segment must be there before anything moves (remote ones are resolved). */
static void check_local_segments(const char *call, const char *side, int i, void *const *local,
                                 int n)
{
    char arg[64];
    for (int j = 0; j < n; j++) {
        if (local_ptr_valid(local[j]))
            continue; /* the common case, without formatting a name */
        snprintf(arg, sizeof(arg), "iov[%d].%s[%d]", i, side, j);
        check_local(call, arg, local[j]);
    }
}

/* Same node: plain copies, or accumulates under the target's lock. */
static void local_segments(enum vector_op op, const armci_giov_t *v, const struct target *ts,
                           int datatype, const void *scale)
{
    size_t bytes = (size_t)v->bytes;
    for (int j = 0; j < v->ptr_array_len; j++) {
        if (op == VOP_PUT)
            memmove(ts[j].local, v->src_ptr_array[j], bytes);
        else if (op == VOP_GET)
            memmove(v->dst_ptr_array[j], ts[j].local, bytes);
        else
            acc_apply(datatype, scale, ts[j].local, v->src_ptr_array[j], bytes);
    }
}

static int do_vector(const char *call, enum vector_op op, int datatype, void *scale,
                     armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *hdl, bool blocking)
{
    rt_require_init(call);
    check_proc(call, "proc", proc);
    check_iov(call, iov, iov_len);
    for (int i = 0; i < iov_len; i++) {
        if (iov_empty(&iov[i]))
            continue;
        if (op == VOP_ACC)
            acc_check(call, datatype, scale, iov[i].bytes);
        if (op == VOP_GET)
            check_local_segments(call, "dst_ptr_array", i, iov[i].dst_ptr_array,
                                 iov[i].ptr_array_len);
        else
            check_local_segments(call, "src_ptr_array", i, iov[i].src_ptr_array,
                                 iov[i].ptr_array_len);
    }
    bool same_node = topo_same_node(proc);
    struct handle *req = same_node ? NULL : handle_for(call, hdl);
    const char *arg = op == VOP_GET ? "iov[].src_ptr_array[]" : "iov[].dst_ptr_array[]";

    for (int i = 0; i < iov_len; i++) {
        const armci_giov_t *v = &iov[i];
        int n = v->ptr_array_len;
        if (iov_empty(v))
            continue;
        /* Validate every remote segment before moving anything. */
        struct target *ts = xmalloc(sizeof(*ts) * (size_t)n);
        void **remote = op == VOP_GET ? v->src_ptr_array : v->dst_ptr_array;
        void **local = op == VOP_GET ? v->dst_ptr_array : v->src_ptr_array;
        for (int j = 0; j < n; j++)
            seg_resolve(call, arg, proc, remote[j], (size_t)v->bytes, &ts[j]);

        if (same_node && op == VOP_ACC) {
            node_acc_lock(topo_local_index(proc));
            local_segments(op, v, ts, datatype, scale);
            node_acc_unlock(topo_local_index(proc));
        } else if (same_node) {
            local_segments(op, v, ts, datatype, scale);
        } else if (op == VOP_PUT) {
#if ARMCI_MUTANT_IS(vector_piece_skipped)
            n -= n > 1;
#endif
            vector_remote_put(ts, local, n, (size_t)v->bytes, req, blocking);
        } else if (op == VOP_GET) {
            vector_remote_get(ts, local, n, (size_t)v->bytes, req, blocking);
        } else {
            vector_remote_acc(ts, local, n, (size_t)v->bytes, datatype, scale, req, blocking);
        }
        free(ts);
    }
    return 0;
}

int PARMCI_PutV(armci_giov_t *iov, int iov_len, int proc)
{
    return do_vector("ARMCI_PutV", VOP_PUT, 0, NULL, iov, iov_len, proc, NULL, true);
}
PROFILED(PutV)

int PARMCI_GetV(armci_giov_t *iov, int iov_len, int proc)
{
    return do_vector("ARMCI_GetV", VOP_GET, 0, NULL, iov, iov_len, proc, NULL, true);
}
PROFILED(GetV)

int PARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc)
{
    return do_vector("ARMCI_AccV", VOP_ACC, datatype, scale, iov, iov_len, proc, NULL, true);
}
PROFILED(AccV)

int PARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *hdl)
{
    return do_vector("ARMCI_NbPutV", VOP_PUT, 0, NULL, iov, iov_len, proc, hdl, false);
}
PROFILED(NbPutV)

int PARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *hdl)
{
    return do_vector("ARMCI_NbGetV", VOP_GET, 0, NULL, iov, iov_len, proc, hdl, false);
}
PROFILED(NbGetV)

int PARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc,
                  armci_hdl_t *hdl)
{
    return do_vector("ARMCI_NbAccV", VOP_ACC, datatype, scale, iov, iov_len, proc, hdl, false);
}
PROFILED(NbAccV)
