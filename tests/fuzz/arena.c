/*
 * The data server's segments and the runtime doubles its request code needs,
 * shared by the fuzz targets ds and dgram (arena.h).
 */
#include "arena.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/node_shared.h"
#include "core/runtime.h"
#include "core/shm.h"
#include "core/ticket_lock.h"
#include "core/topology.h"
#include "core/util.h"

const struct fake_segment arena_segs[ARENA_NSEGS] = {
    {"/armci-fuzz-a", 1, FUZZ_DS_A_OFFSET, FUZZ_DS_A_SIZE, REGISTRY_DATA},
    {"/armci-fuzz-b", 2, FUZZ_DS_B_OFFSET, FUZZ_DS_B_SIZE, REGISTRY_DATA},
    {"/armci-fuzz-locks", 3, FUZZ_DS_LOCK_OFFSET, FUZZ_DS_LOCKS * sizeof(struct ticket_lock),
     REGISTRY_LOCKS},
    {"/armci-fuzz-c", 4, FUZZ_DS_C_OFFSET, FUZZ_DS_C_SIZE, REGISTRY_DATA},
};

uint8_t *arena;
static uint8_t pristine[ARENA_SIZE]; /* the segments' contents at the start of an input */
static uint8_t snapshot[ARENA_SIZE];

/* ---- the runtime ---- */

struct runtime rt = {.me = 0, .nprocs = 8, .job_id = "fuzz"};

/* Two nodes of four; the server is node 0's. */
static int node_of[8] = {0, 0, 0, 0, 1, 1, 1, 1};
static int local_of[8] = {0, 1, 2, 3, 0, 1, 2, 3};
static int node_first[3] = {0, 4, 8};
static int node_ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
struct topology topo = {.num_nodes = 2,
                        .my_node = 0,
                        .node_of = node_of,
                        .local_of = local_of,
                        .node_first = node_first,
                        .node_ranks = node_ranks};

void armci_die(const char *call, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    FUZZ_CHECK(0, "a request ended the job: %s: %s", call ? call : "", msg);
    abort();
}

void armci_warn(const char *fmt, ...)
{
    (void)fmt;
}

void check_ptr(const char *call, const char *arg, const void *ptr)
{
    if (!ptr)
        armci_die(call, "argument %s is NULL", arg);
}

void *xmalloc(size_t size)
{
    void *p = malloc(size);
    FUZZ_CHECK(p, "out of memory");
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    FUZZ_CHECK(p, "out of memory");
    return p;
}

void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size);
    FUZZ_CHECK(p, "out of memory");
    return p;
}

static bool acc_held[4];

void node_acc_lock(int local)
{
    FUZZ_CHECK(local >= 0 && local < 4, "accumulate lock %d of a node of 4", local);
    FUZZ_CHECK(!acc_held[local], "accumulate lock %d taken twice", local);
    acc_held[local] = true;
}

void node_acc_unlock(int local)
{
    FUZZ_CHECK(local >= 0 && local < 4 && acc_held[local], "accumulate lock %d not held", local);
    acc_held[local] = false;
}

void *shm_try_map_existing(const char *name, size_t size, void *wanted, int *err)
{
    (void)wanted;
    for (size_t i = 0; i < ARENA_NSEGS; i++)
        if (!strcmp(name, arena_segs[i].name) && size == arena_segs[i].size)
            return arena + arena_segs[i].offset;
    *err = ENOENT;
    return NULL;
}

void shm_unmap(void *addr, size_t size)
{
    (void)addr;
    (void)size;
}

static struct net_mr mrs[ARENA_NSEGS];
static size_t nmrs;

struct net_mr *net_reg(const char *call, void *addr, size_t len, bool remote)
{
    FUZZ_CHECK(nmrs < ARENA_NSEGS, "%s: too many registrations", call);
    mrs[nmrs] = (struct net_mr){.addr = addr,
                                .len = len,
                                .lkey = (uint32_t)(0x200 + nmrs),
                                .rkey = (uint32_t)(0x100 + nmrs)};
    (void)remote;
    return &mrs[nmrs++];
}

void net_dereg(struct net_mr *mr)
{
    (void)mr;
}

const struct net_mr *arena_mr_holding(uint64_t addr, uint64_t len)
{
    for (size_t k = 0; k < nmrs; k++)
        if (addr >= (uintptr_t)mrs[k].addr && addr + len <= (uintptr_t)mrs[k].addr + mrs[k].len)
            return &mrs[k];
    return NULL;
}

/* ---- the arena ---- */

void arena_init(void)
{
    arena = mmap((void *)(uintptr_t)FUZZ_DS_ARENA, ARENA_SIZE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (arena != (uint8_t *)(uintptr_t)FUZZ_DS_ARENA) {
        /* Taken by something else (an unusual sanitizer layout): nothing to test here. */
        fprintf(stderr, "SKIP: cannot map the arena at 0x%llx: %s\n", FUZZ_DS_ARENA,
                strerror(errno));
        exit(77);
    }
    memset(arena, CANARY, ARENA_SIZE);
    for (size_t i = 0; i < ARENA_NSEGS; i++)
        for (size_t k = 0; k < arena_segs[i].size; k++)
            pristine[arena_segs[i].offset + k] =
                arena_segs[i].kind == REGISTRY_LOCKS ? 0 : (uint8_t)(k * 31 + i);
    for (size_t i = 0; i < ARENA_NSEGS; i++) {
        uint64_t base;
        uint32_t rkey;
        FUZZ_CHECK(registry_map(arena_segs[i].seg_id, arena_segs[i].name, arena_segs[i].size,
                                arena_segs[i].kind, 0, 0, &base, &rkey) == 0,
                   "registry_map %s", arena_segs[i].name);
    }
    /* Poison every canary byte (ASan works on 8-byte granules: the layout is 8-aligned). */
    size_t off = 0;
    for (size_t i = 0; i < ARENA_NSEGS; i++) {
        FUZZ_POISON(arena + off, arena_segs[i].offset - off);
        off = arena_segs[i].offset + arena_segs[i].size;
    }
    FUZZ_POISON(arena + off, ARENA_SIZE - off);
}

/* Copied: the harness's own loops would cost more than the code under test under coverage
 * instrumentation. */
void arena_reset(void)
{
    for (size_t i = 0; i < ARENA_NSEGS; i++)
        memcpy(arena + arena_segs[i].offset, pristine + arena_segs[i].offset, arena_segs[i].size);
}

void arena_snapshot(void)
{
    for (size_t i = 0; i < ARENA_NSEGS; i++)
        memcpy(snapshot + arena_segs[i].offset, arena + arena_segs[i].offset, arena_segs[i].size);
}

bool arena_unchanged(void)
{
    for (size_t i = 0; i < ARENA_NSEGS; i++)
        if (memcmp(snapshot + arena_segs[i].offset, arena + arena_segs[i].offset,
                   arena_segs[i].size))
            return false;
    return true;
}

#ifndef FUZZ_ASAN
static bool in_segment(size_t off)
{
    for (size_t i = 0; i < ARENA_NSEGS; i++)
        if (off >= arena_segs[i].offset && off < arena_segs[i].offset + arena_segs[i].size)
            return true;
    return false;
}
#endif

void arena_check(void)
{
#ifndef FUZZ_ASAN
    for (size_t off = 0; off < ARENA_SIZE; off++)
        FUZZ_CHECK(in_segment(off) || arena[off] == CANARY, "canary at segment offset 0x%zx hit",
                   off);
#endif
    for (int i = 0; i < 4; i++)
        FUZZ_CHECK(!acc_held[i], "accumulate lock %d left held", i);
}
