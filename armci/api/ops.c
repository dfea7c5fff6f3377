/*
 * Contiguous put, get and accumulate, blocking and non-blocking, and the
 * scalar forms. Same-node targets are served from shared memory here;
 * others go to the transport's remote_put, remote_get and remote_acc
 * (transport/remote.h).
 */
#include <string.h>

#include "core/acc.h"
#include "armci.h"
#include "core/error.h"
#include "api/profiling.h"
#include "transport/remote.h"
#include "api/user_handles.h"
#include "core/runtime.h"
#include "api/segment.h"

/*
 * Checks shared by every contiguous operation; false means "nothing to do"
 * (zero bytes: then neither buffer is looked at).
 */
static bool check_contig(const char *call, const char *local_arg, const void *local,
                         const char *remote_arg, const void *remote, int bytes, int proc)
{
    rt_require_init(call);
    check_proc(call, "proc", proc);
    check_nonneg(call, "bytes", bytes);
    if (bytes == 0)
        return false;
    check_local(call, local_arg, local);
    check_ptr(call, remote_arg, remote);
    return true;
}

static int put_contig(const char *call, void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl,
                      bool blocking)
{
    if (!check_contig(call, "src", src, "dst", dst, bytes, proc))
        return 0;
    struct target t;
    seg_resolve(call, "dst", proc, dst, (size_t)bytes, &t);
    if (t.local)
        memmove(t.local, src, (size_t)bytes);
    else
        remote_put(&t, src, (size_t)bytes, handle_for(call, hdl), blocking);
    return 0;
}

static int get_contig(const char *call, void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl,
                      bool blocking)
{
    if (!check_contig(call, "dst", dst, "src", src, bytes, proc))
        return 0;
    struct target t;
    seg_resolve(call, "src", proc, src, (size_t)bytes, &t);
    if (t.local)
        memmove(dst, t.local, (size_t)bytes);
    else
        remote_get(&t, dst, (size_t)bytes, handle_for(call, hdl), blocking);
    return 0;
}

static int acc_contig(const char *call, int datatype, void *scale, void *src, void *dst, int bytes,
                      int proc, armci_hdl_t *hdl, bool blocking)
{
    if (!check_contig(call, "src", src, "dst", dst, bytes, proc))
        return 0;
    acc_check(call, datatype, scale, bytes);
    struct target t;
    seg_resolve(call, "dst", proc, dst, (size_t)bytes, &t);
    if (t.local)
        acc_local(datatype, scale, t.local, src, (size_t)bytes, proc);
    else
        remote_acc(&t, datatype, scale, src, (size_t)bytes, handle_for(call, hdl), blocking);
    return 0;
}

int PARMCI_Put(void *src, void *dst, int bytes, int proc)
{
    return put_contig("ARMCI_Put", src, dst, bytes, proc, NULL, true);
}
PROFILED(Put)

int PARMCI_Get(void *src, void *dst, int bytes, int proc)
{
    return get_contig("ARMCI_Get", src, dst, bytes, proc, NULL, true);
}
PROFILED(Get)

int PARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes, int proc)
{
    return acc_contig("ARMCI_Acc", datatype, scale, src, dst, bytes, proc, NULL, true);
}
PROFILED(Acc)

int PARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    return put_contig("ARMCI_NbPut", src, dst, bytes, proc, hdl, false);
}
PROFILED(NbPut)

int PARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl)
{
    return get_contig("ARMCI_NbGet", src, dst, bytes, proc, hdl, false);
}
PROFILED(NbGet)

int PARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes, int proc,
                 armci_hdl_t *hdl)
{
    return acc_contig("ARMCI_NbAcc", datatype, scale, src, dst, bytes, proc, hdl, false);
}
PROFILED(NbAcc)

/* Scalar puts: the value is copied before returning, so even Nb forms are safe. */
#define PUT_VALUE(Name, T)                                                                  \
    int PARMCI_PutValue##Name(T src, void *dst, int proc)                                   \
    {                                                                                       \
        return put_contig("ARMCI_PutValue" #Name, &src, dst, sizeof(T), proc, NULL, true);  \
    }                                                                                       \
    PROFILED(PutValue##Name)                                                                \
    int PARMCI_NbPutValue##Name(T src, void *dst, int proc, armci_hdl_t *hdl)               \
    {                                                                                       \
        return put_contig("ARMCI_NbPutValue" #Name, &src, dst, sizeof(T), proc, hdl, true); \
    }                                                                                       \
    PROFILED(NbPutValue##Name)                                                              \
    T PARMCI_GetValue##Name(void *src, int proc)                                            \
    {                                                                                       \
        T value = 0;                                                                        \
        get_contig("ARMCI_GetValue" #Name, src, &value, sizeof(T), proc, NULL, true);       \
        return value;                                                                       \
    }                                                                                       \
    PROFILED(GetValue##Name)

PUT_VALUE(Int, int)
PUT_VALUE(Long, long)
PUT_VALUE(Float, float)
PUT_VALUE(Double, double)

void ARMCI_Copy(void *src, void *dst, int size)
{
    check_nonneg("ARMCI_Copy", "size", size);
    if (!size)
        return;
    check_local("ARMCI_Copy", "src", src);
    check_local("ARMCI_Copy", "dst", dst);
    memmove(dst, src, (size_t)size);
}

/* Direct access to local ARMCI memory needs no bracketing here: it is plain memory. */
void PARMCI_Access_begin(void *ptr)
{
    rt_require_init("ARMCI_Access_begin");
    check_ptr("ARMCI_Access_begin", "ptr", ptr);
}
PROFILED(Access_begin)

void PARMCI_Access_end(void *ptr)
{
    rt_require_init("ARMCI_Access_end");
    check_ptr("ARMCI_Access_end", "ptr", ptr);
}
PROFILED(Access_end)
