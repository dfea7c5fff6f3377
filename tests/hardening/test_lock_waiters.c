/*
 * The data server's lock queue (dataserver/locks.c) alone, with the rest of
 * the server replaced by recorders: a remote waiter queued on a mutex whose
 * lock block is then freed is answered with an error and forgotten, so the
 * server never touches the unmapped block again (it used to keep the raw
 * pointer and read it on the next rescan: a use after free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/ticket_lock.h"
#include "dataserver/locks.h"
#include "dataserver/registry.h"
#include "dataserver/answers.h"

#define UNIT_TEST_RUNTIME_HELPERS
#include "unit_test.h"

/* ---- what locks.c needs from the rest of the server ---- */

static uint64_t block_base, block_size;
static int replies, queued_notices, last_status;
static uint64_t last_token;

bool registry_is_lock(uint64_t addr)
{
    return addr >= block_base && addr < block_base + block_size &&
           (addr - block_base) % sizeof(struct ticket_lock) == 0;
}

void server_lock_queued(struct server_conn *sc, uint64_t token)
{
    (void)sc;
    (void)token;
    queued_notices++;
}

void server_answer_lock(struct server_conn *sc, uint64_t token, int status, bool queued)
{
    (void)sc;
    (void)queued;
    replies++;
    last_token = token;
    last_status = status;
}

void server_answer(struct server_conn *sc, uint64_t token, int status, int64_t value, bool may_wait)
{
    (void)may_wait;
    (void)value;
    server_answer_lock(sc, token, status, false);
}

/* ---- the test ---- */

static struct ds_message lock_message(enum ds_op op, uint64_t addr, uint64_t token)
{
    return (struct ds_message){
        .op = (uint8_t)op, .addr = addr, .len = sizeof(struct ticket_lock), .token = token};
}

int main(void)
{
    block_size = 4 * sizeof(struct ticket_lock);
    void *block =
        mmap(NULL, block_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(block != MAP_FAILED, "mmap");
    block_base = (uintptr_t)block;
    struct server_conn a = {.client = 5}, b = {.client = 6};
    uint64_t mutex = block_base + sizeof(struct ticket_lock);

    struct ds_message rq = lock_message(DS_LOCK, mutex, 1);
    lock_request(&a, &rq);
    EXPECT(replies == 1 && last_status == DS_OK, "the free mutex is granted at once");
    rq = lock_message(DS_LOCK, mutex, 2);
    lock_request(&b, &rq);
    EXPECT(replies == 1 && queued_notices == 1,
           "the second locker waits, told so (its credit returns at once)");

    rq = lock_message(DS_UNLOCK, mutex, 3);
    lock_request(&b, &(struct ds_message){.op = DS_LOCK, .addr = mutex + 8, .len = 64, .token = 9});
    EXPECT(replies == 2 && last_status == DS_EFAULT, "a lock inside a mutex is refused");
    unlock_request(&b, &rq);
    EXPECT(replies == 3 && last_status == DS_EPERM, "an unlock by a non-holder is refused");

    /* The block is freed while b waits: b hears so, and the server forgets the pointer. */
    locks_forget_range(block_base, block_size);
    EXPECT(replies == 4 && last_token == 2 && last_status == DS_EFAULT,
           "the waiter of a freed block is answered with an error");
    munmap(block, block_size);
    locks_rescan(); /* would read the unmapped block if the waiter were still queued */
    locks_fini();
    printf("PASS lock waiters of a freed block\n");
    return 0;
}
