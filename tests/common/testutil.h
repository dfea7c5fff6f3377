/* Small helpers for the multi-process tests: checks that report rank and line. */
#ifndef ARMCI_TESTUTIL_H
#define ARMCI_TESTUTIL_H

#include <armci.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "FAIL rank %d %s:%d: ", armci_msg_me(), __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

/* xorshift64*: reproducible per-rank random numbers. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* The byte expected at offset i of a pattern identified by seed. */
static inline unsigned char pattern_byte(uint64_t seed, size_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 31;
    return (unsigned char)(x * 0x94D049BB133111EBULL >> 56);
}

static inline void fill_pattern(unsigned char *buf, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern_byte(seed, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long check_pattern(const unsigned char *buf, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pattern_byte(seed, i))
            return (long)i;
    return -1;
}

#define TEST_DONE()                                                          \
    do {                                                                     \
        ARMCI_Barrier();                                                     \
        if (armci_msg_me() == 0)                                             \
            printf("PASS %s (%d processes)\n", __FILE__, armci_msg_nproc()); \
    } while (0)

#endif
