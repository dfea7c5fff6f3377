/*
 * Device atomics for ARMCI_Rmw (atomic_path.h): fetch-and-add is one
 * IBV_WR_ATOMIC_FETCH_AND_ADD; swap is a loop of IBV_WR_ATOMIC_CMP_AND_SWP,
 * since verbs have no unconditional swap: it guesses the old value, the
 * compare-and-swap answers the real one, and it tries again with that
 * until nobody changed the word in between (a good guess: one round trip).
 */
#include "transport/atomic_path.h"

#include <stdbool.h>
#include <string.h>

#include "armci.h"
#include "core/error.h"
#include "core/mutant.h"
#include "core/threads.h"
#include "odcm/conn.h"
#include "transport/conn_io.h"
#include "transport/entry.h"
#include "transport/progress.h"
#include "transport/rdma_path.h"
#include "transport/send_queue.h"
#include "transport/work.h"
#include "verbs/buffer_pool.h"

/* What the completion hands back: the old value, read out of the bounce buffer before it is
 * released. */
struct atomic_result {
    uint64_t old;
};

static void read_old_value(struct work *f)
{
    struct atomic_result *r = f->ctx;
    memcpy(&r->old, f->bounce->addr, sizeof(r->old));
}

/* One atomic work request on the connection to t's node; waits for its answer. */
static uint64_t device_atomic(const struct target *t, enum ibv_wr_opcode op, uint64_t compare_add,
                              uint64_t swap)
{
    if (t->server_addr % sizeof(uint64_t))
        armci_die("ARMCI_Rmw",
                  "the data server's address 0x%llx of process %d's long is not "
                  "8-byte aligned: device atomics need it",
                  (unsigned long long)t->server_addr, t->proc);
    rt_lock();
    struct conn *c = conn_get(t->node);
    wait_server_updates(c); /* an earlier accumulate to this long lands first */
    struct pool_buffer *b = send_buffer_wait(sizeof(uint64_t));
    struct handle done = {0};
    struct atomic_result result = {0};
    struct work *f = work_new(WORK_READ, c, &done);
    f->bounce = b; /* the device writes the old value here; released on completion */
    f->on_done = read_old_value;
    f->ctx = &result;
    struct ibv_sge sge = {.addr = (uintptr_t)b->addr, .length = sizeof(uint64_t), .lkey = b->lkey};
    struct ibv_send_wr wr = {
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = op,
        .wr = {.atomic = {.remote_addr = t->server_addr,
                          .compare_add = compare_add,
                          .swap = swap,
                          .rkey = t->rkey}},
    };
    sq_note_remote(c, t->server_addr, t->rkey);
    f->what =
        op == IBV_WR_ATOMIC_FETCH_AND_ADD ? "atomic fetch-and-add" : "atomic compare-and-swap";
    sq_post_awaited(c, &wr, f);
    handle_wait(&done);
    conn_unpin(c);
    rt_unlock();
    return result.old;
}

/* The value this thread last swapped in, and where: a swap to the same word again (a flag, a
 * token passed around) most likely finds it still there, and then costs one round trip. */
static __thread struct {
    int proc;
    uint64_t addr;
    uint64_t value;
} last_swap __attribute__((tls_model("initial-exec"))) = {.proc = -1};

static long swap_long(const struct target *t, long value)
{
    /* A failed compare-and-swap changes nothing and answers the word's value: start from a
     * guess (what we swapped in there last, else 0, a fresh word's value) and retry with what
     * the device saw until the word did not change in between. */
    bool again = last_swap.proc == t->proc && last_swap.addr == t->server_addr;
    uint64_t expected = again ? last_swap.value : 0;
    for (;;) {
        uint64_t seen = device_atomic(t, IBV_WR_ATOMIC_CMP_AND_SWP, expected, (uint64_t)value);
#if ARMCI_MUTANT_IS(rmw_swap_no_retry)
        return (long)seen;
#endif
        if (seen == expected)
            break;
        expected = seen;
    }
    last_swap.proc = t->proc;
    last_swap.addr = t->server_addr;
    last_swap.value = (uint64_t)value;
    return (long)expected;
}

long atomic_rmw_long(const struct target *t, int op, long value)
{
    if (op == ARMCI_SWAP_LONG)
        return swap_long(t, value);
    return (long)device_atomic(t, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint64_t)value, 0);
}
