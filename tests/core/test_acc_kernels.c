/* Unit test of the accumulate kernels: every type, unit and non-unit scale,
 * odd lengths and unaligned buffers, against a straightforward reference. */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/acc.h"
#include "armci.h"

static int failures;

#define EXPECT(cond, ...)                 \
    do {                                  \
        if (!(cond)) {                    \
            failures++;                   \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr);          \
        }                                 \
    } while (0)

#define REAL_CASE(T, type, s)                                                                   \
    do {                                                                                        \
        for (int n = 0; n < 67; n += 11) {                                                      \
            char raw_d[sizeof(T) * 80 + 1], raw_x[sizeof(T) * 80 + 1];                          \
            T d[80], x[80], ref[80], scale = (s);                                               \
            for (int i = 0; i < n; i++) {                                                       \
                d[i] = (T)(i * 3 - 7);                                                          \
                x[i] = (T)(i % 5 - 2);                                                          \
                ref[i] = d[i] + scale * x[i];                                                   \
            }                                                                                   \
            /* One byte off alignment on both sides. */                                         \
            memcpy(raw_d + 1, d, sizeof(T) * n);                                                \
            memcpy(raw_x + 1, x, sizeof(T) * n);                                                \
            acc_apply(type, &scale, raw_d + 1, raw_x + 1, sizeof(T) * n);                       \
            memcpy(d, raw_d + 1, sizeof(T) * n);                                                \
            for (int i = 0; i < n; i++)                                                         \
                EXPECT(d[i] == ref[i], #T " scale %g n %d [%d]: %g vs %g", (double)scale, n, i, \
                       (double)d[i], (double)ref[i]);                                           \
        }                                                                                       \
    } while (0)

#define COMPLEX_CASE(T, type, sr, si)                      \
    do {                                                   \
        int n = 33;                                        \
        T d[33], x[33], ref[33], scale = (sr) + (si)*I;    \
        for (int i = 0; i < n; i++) {                      \
            d[i] = (i - 4) + (2 * i) * I;                  \
            x[i] = (i % 3) - (i % 4) * I;                  \
            ref[i] = d[i] + scale * x[i];                  \
        }                                                  \
        acc_apply(type, &scale, d, x, sizeof(d));          \
        for (int i = 0; i < n; i++)                        \
            EXPECT(d[i] == ref[i], #T " [%d] differs", i); \
    } while (0)

int main(void)
{
    REAL_CASE(int, ARMCI_ACC_INT, 1);
    REAL_CASE(int, ARMCI_ACC_INT, -3);
    REAL_CASE(long, ARMCI_ACC_LNG, 1);
    REAL_CASE(long, ARMCI_ACC_LNG, 100000);
    REAL_CASE(float, ARMCI_ACC_FLT, 1.0f);
    REAL_CASE(float, ARMCI_ACC_FLT, 0.5f);
    REAL_CASE(double, ARMCI_ACC_DBL, 1.0);
    REAL_CASE(double, ARMCI_ACC_DBL, -2.25);
    COMPLEX_CASE(float complex, ARMCI_ACC_CPL, 1.0f, 0.0f);
    COMPLEX_CASE(float complex, ARMCI_ACC_CPL, 2.0f, -1.0f);
    COMPLEX_CASE(double complex, ARMCI_ACC_DCP, 1.0, 0.0);
    COMPLEX_CASE(double complex, ARMCI_ACC_DCP, 0.5, 3.0);

    EXPECT(acc_elem_size(ARMCI_ACC_INT) == sizeof(int), "int size");
    EXPECT(acc_elem_size(ARMCI_ACC_DCP) == 16, "dcomplex size");
    EXPECT(acc_elem_size(6) == 0 && acc_elem_size(-1) == 0, "invalid types have size 0");

    if (failures) {
        fprintf(stderr, "%d accumulate kernel checks failed\n", failures);
        return 1;
    }
    printf("PASS accumulate kernels\n");
    return 0;
}
