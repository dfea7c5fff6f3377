/*
 * The registry tells the lock queue when a lock block goes
 * (dataserver/registry.c, registry_init's callback, which the server points
 * at locks_forget_range): a remote waiter queued on a mutex of a block that
 * its owner unmaps is answered with an error and forgotten before the block
 * is unmapped, so the server never reads the block again. registry.c and
 * locks.c run as they are; memory, registration and replies are recorders.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/runtime.h"
#include "core/shm.h"
#include "core/ticket_lock.h"
#include "core/util.h"
#include "dataserver/locks.h"
#include "dataserver/registry.h"
#include "dataserver/answers.h"
#include "verbs/memory.h"

#define UNIT_TEST_RUNTIME_HELPERS
#include "unit_test.h"

/* ---- what registry.c and locks.c need from the rest of the runtime ---- */

struct runtime rt = {.job_id = "test"};
static void *block;
static size_t block_size;
static bool block_mapped;
static bool answered_late; /* a waiter answered after its block was unmapped */
static int replies, last_status;
static uint64_t last_token;

void *shm_try_map_existing(const char *name, size_t size, void *wanted, int *err)
{
    (void)wanted;
    if (strcmp(name, "/armci-test-locks") || size != block_size) {
        *err = ENOENT;
        return NULL;
    }
    return block;
}

void shm_unmap(void *addr, size_t size)
{
    if (addr == block && size == block_size)
        block_mapped = false;
}

struct net_mr *net_reg(const char *call, void *addr, size_t len, bool remote)
{
    (void)call;
    (void)remote;
    struct net_mr *m = calloc(1, sizeof(*m));
    *m = (struct net_mr){.addr = addr, .len = len, .lkey = 1, .rkey = 2};
    return m;
}

void net_dereg(struct net_mr *mr)
{
    free(mr);
}

void server_lock_queued(struct server_conn *sc, uint64_t token)
{
    (void)sc;
    (void)token;
}

void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued)
{
    (void)sc;
    (void)queued;
    replies++;
    last_token = token;
    last_status = status;
    if (!block_mapped)
        answered_late = true;
}

void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait)
{
    (void)may_wait;
    (void)value;
    server_answer_lock(sc, token, status, false);
}

/* ---- the test ---- */

static struct ds_message lock_message(uint64_t addr, uint64_t token)
{
    return (struct ds_message){
        .op = DS_LOCK, .addr = addr, .len = sizeof(struct ticket_lock), .token = token};
}

int main(void)
{
    block_size = 4 * sizeof(struct ticket_lock);
    block = mmap(NULL, block_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(block != MAP_FAILED, "mmap");
    registry_init(locks_forget_range);
    uint64_t base;
    uint32_t rkey;
    EXPECT(registry_map(7, "/armci-test-locks", block_size, REGISTRY_LOCKS, 1, 0, &base, &rkey) ==
               0,
           "the lock block is mapped");
    block_mapped = true;
    struct server_conn a = {.client = 5}, b = {.client = 6};
    uint64_t mutex = base + sizeof(struct ticket_lock);

    struct ds_message rq = lock_message(mutex, 1);
    lock_request(&a, &rq);
    EXPECT(replies == 1 && last_status == DS_OK, "the free mutex is granted at once");
    rq = lock_message(mutex, 2);
    lock_request(&b, &rq);
    EXPECT(replies == 1, "the second locker waits");

    EXPECT(registry_unmap(7, 0) == EPERM && replies == 1, "only the owner unmaps");
    EXPECT(registry_unmap(7, 1) == 0, "the owner unmaps its block");
    EXPECT(!block_mapped, "the block was unmapped");
    EXPECT(replies == 2 && last_token == 2 && last_status == DS_EFAULT,
           "the waiter of the unmapped block is answered with an error");
    EXPECT(!answered_late, "the waiter is answered before its block is unmapped");
    munmap(block, block_size);
    locks_rescan(); /* would read the unmapped block if the waiter were still queued */
    locks_fini();
    registry_fini();
    printf("PASS a lock block's unmap answers its waiters\n");
    return 0;
}
