/*
 * Shared by the fuzz harnesses: each defines LLVMFuzzerTestOneInput (and
 * LLVMFuzzerInitialize), linked either with libFuzzer (scripts/fuzz.sh,
 * clang) or with replay.c's main, which feeds it the files of a corpus
 * (the `hardening` suite, any compiler).
 */
#ifndef ARMCI_FUZZ_H
#define ARMCI_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif

#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define FUZZ_POISON(p, n)   ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* A broken invariant is a crash: libFuzzer keeps the input, the replay fails. */
#define FUZZ_CHECK(cond, ...)                                              \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FUZZ INVARIANT %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* Reads an input front to back; past its end every read gives zeros. */
struct fuzz_input {
    const uint8_t *p;
    size_t left;
};

static inline uint8_t fuzz_u8(struct fuzz_input *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_input *in)
{
    uint16_t lo = fuzz_u8(in);
    return (uint16_t)(lo | fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_input *in)
{
    uint32_t lo = fuzz_u16(in);
    return lo | (uint32_t)fuzz_u16(in) << 16;
}

/* Copies n bytes into dst (zeros past the end of the input). */
static inline void fuzz_bytes(struct fuzz_input *in, void *dst, size_t n)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = fuzz_u8(in);
}

/* The data server's segments of the ds and dgram targets, at fixed addresses so that inputs
 * can name them (arena.c): above where PIE executables load, in the application range of
 * ASan, TSan and MSan. */
#define FUZZ_DS_ARENA       0x567000000000ull
#define FUZZ_DS_ARENA_SIZE  0x8000
#define FUZZ_DS_A_OFFSET    0x1000 /* data, page-aligned */
#define FUZZ_DS_A_SIZE      0x2000
#define FUZZ_DS_B_OFFSET    (0x5000 - 3000) /* data, ends on a page boundary */
#define FUZZ_DS_B_SIZE      3000
#define FUZZ_DS_LOCK_OFFSET 0x6000 /* a lock block of FUZZ_DS_LOCKS mutexes */
#define FUZZ_DS_LOCKS       4
#define FUZZ_DS_C_OFFSET    0x7000 /* data, 7 bytes: most sizes overflow it by a little */
#define FUZZ_DS_C_SIZE      7
#define FUZZ_DS_OUT_SIZE    65536 /* the server's out buffer (ARMCI_BOUNCE_SIZE) */

/* The dgram target (fuzz_dgram.c): byte 0 of an input sets the world, the MTU (4096 >>
 * (byte & 7) % 5 bytes: the datagram is ARMCI_HYBRID_SIZE, FUZZ_DGRAM_SIZE, cut to it) and
 * the window (8 >> (byte >> 3 & 3) requests). Then datagrams, each [u8 ctl] ([u16 len] unless
 * FUZZ_DGRAM_NATURAL) [len bytes], ctl a set of these: */
#define FUZZ_DGRAM_FORGED  1  /* sent by another rank's UD data QP than the header names */
#define FUZZ_DGRAM_TWICE   2  /* delivered twice, as UD may */
#define FUZZ_DGRAM_NATURAL 4  /* as long as its requests make it, zeros past the input's end */
#define FUZZ_DGRAM_BUSY    8  /* the first send of every answer datagram finds no buffer */
#define FUZZ_DGRAM_LOST    16 /* every send finds no buffer: the answers are lost */
/* Not forged: the requests come over RC instead, one SEND each on the named rank's
 * connection (a put with bit 0 of its pad left in place for a pull); FUZZ_DGRAM_TWICE: the
 * client replays them on a new connection. (Forged: these bits pick the sender.) */
#define FUZZ_DGRAM_RC     32
#define FUZZ_DGRAM_BROKEN 64 /* RC: the connection is broken (answers cannot leave, a pull fails) \
                              */
#define FUZZ_DGRAM_SIZE 4096

/* The ud target's world: 8 ranks, 2 a node; the harness is rank 2, node 1's master.
 * One LID (InfiniBand) or GID (RoCE: ::ffff:10.0.0.n+1) per node, as on real hosts. */
#define FUZZ_UD_NPROCS 8
#define FUZZ_UD_NODES  4
#define FUZZ_UD_ME     2

static inline void fuzz_ud_port(int node, int roce, uint16_t *lid, uint8_t gid[16])
{
    for (int i = 0; i < 16; i++)
        gid[i] = 0;
    *lid = roce ? 0 : (uint16_t)(node + 1);
    if (roce) {
        gid[10] = gid[11] = 0xff;
        gid[12] = 10;
    } else {
        gid[0] = 0xfe;
        gid[1] = 0x80;
    }
    gid[15] = (uint8_t)(node + 1);
}

/* UD QP numbers: a rank's client endpoint, a node's data server. */
#define FUZZ_UD_CLIENT_QPN(rank) (0x100u + (uint32_t)(rank))
#define FUZZ_UD_SERVER_QPN(node) (0x200u + (uint32_t)(node))

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
