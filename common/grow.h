/*
 * Arrays that grow by doubling, and unordered sets kept in them. Header
 * only, with no allocator of its own: the caller names one (armci/ passes
 * xrealloc, which ends the job when memory runs out), so armci/ and
 * softib/ may both use it.
 */
#ifndef COMMON_GROW_H
#define COMMON_GROW_H

#include <stddef.h>

/* Room for one more element in arr, which holds n of cap: when it is full, cap doubles (the
 * first time it becomes `first`) and arr = realloc_fn(arr, bytes). */
#define GROW_FOR_ONE(arr, n, cap, first, realloc_fn)                   \
    do {                                                               \
        if ((n) == (cap)) {                                            \
            (cap) = (cap) ? 2 * (cap) : (first);                       \
            (arr) = realloc_fn((arr), sizeof(*(arr)) * (size_t)(cap)); \
        }                                                              \
    } while (0)

/* Removes the first element equal to x from arr (n elements; an unordered set) by moving the
 * last one into its place. Nothing happens if x is not there. */
#define SWAP_REMOVE(arr, n, x)                                       \
    do {                                                             \
        for (size_t swap_i_ = 0; swap_i_ < (size_t)(n); swap_i_++) { \
            if ((arr)[swap_i_] == (x)) {                             \
                (arr)[swap_i_] = (arr)[--(n)];                       \
                break;                                               \
            }                                                        \
        }                                                            \
    } while (0)

#endif
