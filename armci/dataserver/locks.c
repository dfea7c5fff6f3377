/*
 * Ticket locks (mutex.h) taken on behalf of clients on other nodes. A lock
 * request takes a ticket at once; if it is not being served yet the client
 * waits in a queue here and is answered when `serving` reaches its ticket,
 * whether the lock was released by another remote client (UNLOCK) or by a
 * process of this node (which wakes us through the local link). FIFO order
 * across all nodes follows from the tickets.
 */
#include <stdlib.h>

#include "core/error.h"
#include "core/ticket_lock.h"
#include "core/util.h"
#include "dataserver/server_internal.h"

struct lock_waiter {
    struct ticket_lock *lock;
    uint64_t ticket;
    struct server_conn *sc;
    uint64_t token;
    struct lock_waiter *next;
};

static struct lock_waiter *waiters;

static bool valid_lock(const struct ds_message *rq)
{
    return rq->len == sizeof(struct ticket_lock) && rq->addr % sizeof(uint64_t) == 0 &&
           registry_contains(rq->addr, sizeof(struct ticket_lock));
}

void lock_request(struct server_conn *sc, const struct ds_message *rq)
{
    if (!valid_lock(rq)) {
        server_reply(sc, rq->token, DS_EFAULT, 0);
        return;
    }
    struct ticket_lock *lock = (struct ticket_lock *)(uintptr_t)rq->addr;
    /*
     * Announce a remote waiter before looking at `serving`: a same-node
     * unlock increments `serving` and then reads `remote_waiters`, so one of
     * the two always sees the other (both sequentially consistent).
     */
    __atomic_fetch_add(&lock->remote_waiters, 1, __ATOMIC_SEQ_CST);
    uint64_t ticket = __atomic_fetch_add(&lock->next, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&lock->serving, __ATOMIC_SEQ_CST) == ticket) {
        __atomic_fetch_sub(&lock->remote_waiters, 1, __ATOMIC_SEQ_CST);
        server_reply(sc, rq->token, DS_OK, 0);
        return;
    }
    struct lock_waiter *w = xmalloc(sizeof(*w));
    *w = (struct lock_waiter){lock, ticket, sc, rq->token, NULL};
    /* Append: waiters are granted in ticket order anyway, this keeps scans short. */
    struct lock_waiter **tail = &waiters;
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
}

void locks_rescan(void)
{
    for (struct lock_waiter **link = &waiters; *link;) {
        struct lock_waiter *w = *link;
        if (__atomic_load_n(&w->lock->serving, __ATOMIC_SEQ_CST) != w->ticket) {
            link = &w->next;
            continue;
        }
        *link = w->next;
        __atomic_fetch_sub(&w->lock->remote_waiters, 1, __ATOMIC_SEQ_CST);
        server_reply(w->sc, w->token, DS_OK, 0);
        free(w);
    }
}

void unlock_request(struct server_conn *sc, const struct ds_message *rq)
{
    if (!valid_lock(rq)) {
        server_reply(sc, rq->token, DS_EFAULT, 0);
        return;
    }
    struct ticket_lock *lock = (struct ticket_lock *)(uintptr_t)rq->addr;
    __atomic_fetch_add(&lock->serving, 1, __ATOMIC_SEQ_CST);
    server_reply(sc, rq->token, DS_OK, 0);
    locks_rescan();
}

void locks_fini(void)
{
    while (waiters) {
        struct lock_waiter *w = waiters;
        waiters = w->next;
        armci_warn("data server: rank %d still waiting for a lock at finalize", w->sc->client);
        free(w);
    }
}
