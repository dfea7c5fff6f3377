#include "core/acc.h"

#include <string.h>

#include "armci.h"
#include "core/error.h"
#include "core/node_shared.h"
#include "core/topology.h"

/* Element types that tolerate any alignment: ARMCI does not require aligned buffers. */
typedef int u_int __attribute__((aligned(1), may_alias));
typedef long u_long __attribute__((aligned(1), may_alias));
typedef float u_float __attribute__((aligned(1), may_alias));
typedef double u_double __attribute__((aligned(1), may_alias));

size_t acc_elem_size(int datatype)
{
    switch (datatype) {
    case ARMCI_ACC_INT:
        return sizeof(int);
    case ARMCI_ACC_LNG:
        return sizeof(long);
    case ARMCI_ACC_FLT:
        return sizeof(float);
    case ARMCI_ACC_DBL:
        return sizeof(double);
    case ARMCI_ACC_CPL:
        return 2 * sizeof(float);
    case ARMCI_ACC_DCP:
        return 2 * sizeof(double);
    default:
        return 0;
    }
}

void acc_check(const char *call, int datatype, const void *scale, long bytes)
{
    size_t elem = acc_elem_size(datatype);
    if (!elem)
        armci_die(call, "argument datatype=%d is not an ARMCI_ACC_* type", datatype);
    check_ptr(call, "scale", scale);
    if (bytes % (long)elem)
        armci_die(call, "byte count %ld is not a multiple of the datatype's element size %zu",
                  bytes, elem);
}

/*
 * Built for AVX2 too and picked at load time: accumulate is memory-bound, wide loads help.
 * Not under sanitizers: the ifunc resolver runs before their runtime is up.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL_CLONES
#endif

#define REAL_KERNEL(name, T, ST)                                                            \
    KERNEL_CLONES static void name(const void *scale, void *dst, const void *src, size_t n) \
    {                                                                                       \
        T s;                                                                                \
        memcpy(&s, scale, sizeof(s));                                                       \
        ST *restrict d = dst;                                                               \
        const ST *restrict x = src;                                                         \
        if (s == (T)1) {                                                                    \
            for (size_t i = 0; i < n; i++)                                                  \
                d[i] += x[i];                                                               \
        } else {                                                                            \
            for (size_t i = 0; i < n; i++)                                                  \
                d[i] += s * x[i];                                                           \
        }                                                                                   \
    }

/* Integers wrap on overflow (two's complement), as the hardware's adders do. */
#define INT_KERNEL(name, T, UT, ST)                                                         \
    KERNEL_CLONES static void name(const void *scale, void *dst, const void *src, size_t n) \
    {                                                                                       \
        T s;                                                                                \
        memcpy(&s, scale, sizeof(s));                                                       \
        ST *restrict d = dst;                                                               \
        const ST *restrict x = src;                                                         \
        for (size_t i = 0; i < n; i++)                                                      \
            d[i] = (T)((UT)d[i] + (UT)s * (UT)x[i]);                                        \
    }

INT_KERNEL(acc_int, int, unsigned, u_int)
INT_KERNEL(acc_long, long, unsigned long, u_long)
REAL_KERNEL(acc_float, float, u_float)
REAL_KERNEL(acc_double, double, u_double)

/* Complex: (a + bi) += (sr + si i) * (xr + xi i), n complex elements. */
#define COMPLEX_KERNEL(name, T, ST)                                                         \
    KERNEL_CLONES static void name(const void *scale, void *dst, const void *src, size_t n) \
    {                                                                                       \
        T s[2];                                                                             \
        memcpy(s, scale, sizeof(s));                                                        \
        ST *restrict d = dst;                                                               \
        const ST *restrict x = src;                                                         \
        for (size_t i = 0; i < n; i++) {                                                    \
            T xr = x[2 * i], xi = x[2 * i + 1];                                             \
            d[2 * i] += s[0] * xr - s[1] * xi;                                              \
            d[2 * i + 1] += s[0] * xi + s[1] * xr;                                          \
        }                                                                                   \
    }

COMPLEX_KERNEL(acc_scomplex, float, u_float)
COMPLEX_KERNEL(acc_dcomplex, double, u_double)

void acc_apply(int datatype, const void *scale, void *dst, const void *src, size_t bytes)
{
    /* Indexed by ARMCI_ACC_INT .. ARMCI_ACC_DCP; callers have checked the type. */
    static void (*const kernel[])(const void *, void *, const void *, size_t) = {
        acc_int, acc_long, acc_float, acc_double, acc_scomplex, acc_dcomplex,
    };
    kernel[datatype](scale, dst, src, bytes / acc_elem_size(datatype));
}

void acc_local(int datatype, const void *scale, void *dst, const void *src, size_t bytes, int proc)
{
    int local = topo_local_index(proc);
    node_acc_lock(local);
    acc_apply(datatype, scale, dst, src, bytes);
    node_acc_unlock(local);
}
