/*
 * Ticket locks (mutex.h) taken on behalf of clients on other nodes. A lock
 * request takes a ticket at once; if it is not being served yet the client
 * waits in a queue here and is answered when `serving` reaches its ticket,
 * whether the lock was released by another remote client (UNLOCK) or by a
 * process of this node (which wakes us through the local link). FIFO order
 * across all nodes follows from the tickets. A queued request is told so at
 * once, which gives its credit back (protocol.h): the waiters of a client
 * never hold the credits its lock holder needs to reach us.
 */
#include <stdlib.h>

#include "core/error.h"
#include "core/mutant.h"
#include "core/ticket_lock.h"
#include "core/util.h"
#include "dataserver/locks.h"
#include "dataserver/registry.h"
#include "dataserver/answers.h"

/* A client waiting for its turn over its RC connection (sc, the request's token). Locks never
 * come over the UD data path: the data server refuses them there (dgram_server.c). */
struct lock_waiter {
    struct ticket_lock *lock;
    uint64_t ticket;
    struct server_conn *sc;
    int client;
    uint64_t token;
    uint64_t seq; /* RC: the request's number in the client's sequence space (dataserver/engine.h) */
    struct lock_waiter *next;
};

/*
 * A lock granted to a client over RC, until it unlocks: if the grant was
 * lost with a broken connection, the replayed request finds it here and is
 * granted again instead of taking a second ticket.
 */
struct lock_grant {
    struct ticket_lock *lock;
    int client;
    uint64_t seq;
    struct lock_grant *next;
};

static struct lock_waiter *waiters;
static struct lock_grant *grants;

static void grant_record(struct ticket_lock *lock, int client, uint64_t seq)
{
    struct lock_grant *g = xmalloc(sizeof(*g));
    *g = (struct lock_grant){lock, client, seq, grants};
    grants = g;
}

/* The grant of `lock` to `client` is over (an unlock, or the lock block is gone). */
static void grant_forget(const struct ticket_lock *lock, int client)
{
    for (struct lock_grant **link = &grants; *link; link = &(*link)->next) {
        struct lock_grant *g = *link;
        if (g->lock == lock && (client < 0 || g->client == client)) {
            *link = g->next;
            free(g);
            return;
        }
    }
}

/* Tells waiter w the outcome of its wait (granted: DS_OK, or an error). */
static void answer_waiter(const struct lock_waiter *w, int status)
{
    if (status == DS_OK)
        grant_record(w->lock, w->client, w->seq);
    server_answer_lock(w->sc, w->token, status, true);
}

/* Only mutexes of ARMCI_Create_mutexes: any other word of a segment is someone's data. */
static int check_lock(const struct ds_message *rq)
{
    if (rq->len != sizeof(struct ticket_lock))
        return DS_EINVAL;
    return registry_is_lock(rq->addr) ? DS_OK : DS_EFAULT;
}

/* The lock is client's from now on (only the holder writes `holder`). */
static void take(struct ticket_lock *lock, int client)
{
    __atomic_store_n(&lock->holder, (int64_t)client + 1, __ATOMIC_RELAXED);
}

/*
 * A ticket for sc's client: DS_OK if the lock is its at once, DS_QUEUED if
 * it waits (a waiter answered through sc), or the request's error.
 */
static int lock_ticket(struct server_conn *sc, const struct ds_message *rq)
{
    int status = check_lock(rq);
    if (status != DS_OK)
        return status;
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
        take(lock, sc->client);
        return DS_OK;
    }
    struct lock_waiter *w = xmalloc(sizeof(*w));
    *w = (struct lock_waiter){lock, ticket, sc, sc->client, rq->token, rq->seq, NULL};
    /* Append: waiters are granted in ticket order anyway, this keeps scans short. */
    struct lock_waiter **tail = &waiters;
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
    return DS_QUEUED;
}

int lock_request(struct server_conn *sc, const struct ds_message *rq)
{
    int status = lock_ticket(sc, rq);
    if (status == DS_OK)
        grant_record((struct ticket_lock *)(uintptr_t)rq->addr, sc->client, rq->seq);
    if (status == DS_QUEUED)
        server_lock_queued(sc, rq->token);
    else
        server_answer_lock(sc, rq->token, status, false);
    return status;
}

bool lock_replayed(struct server_conn *sc, const struct ds_message *rq)
{
    const struct ticket_lock *lock = (const struct ticket_lock *)(uintptr_t)rq->addr;
    for (struct lock_waiter *w = waiters; w; w = w->next) {
        if (w->client == sc->client && w->seq == rq->seq && w->lock == lock) {
            w->sc = sc; /* its grant goes to the connection that replaced the broken one */
            w->token = rq->token;
            server_lock_queued(sc, rq->token);
            return true;
        }
    }
    for (const struct lock_grant *g = grants; g; g = g->next) {
        if (g->client == sc->client && g->seq == rq->seq && g->lock == lock) {
            server_answer_lock(sc, rq->token, DS_OK, false);
            return true;
        }
    }
    return false;
}

#if ARMCI_MUTANT_IS(lock_queue_lifo)
/* The bug: the newest waiter for a lock takes over the ticket now being served. */
static void newest_waiter_first(void)
{
    for (struct lock_waiter *w = waiters; w; w = w->next) {
        if (__atomic_load_n(&w->lock->serving, __ATOMIC_SEQ_CST) != w->ticket)
            continue;
        struct lock_waiter *newest = w;
        for (struct lock_waiter *v = w->next; v; v = v->next)
            if (v->lock == w->lock && v->ticket > newest->ticket)
                newest = v;
        uint64_t t = newest->ticket;
        newest->ticket = w->ticket;
        w->ticket = t;
    }
}
#endif

void locks_rescan(void)
{
#if ARMCI_MUTANT_IS(lock_queue_lifo)
    newest_waiter_first();
#endif
    for (struct lock_waiter **link = &waiters; *link;) {
        struct lock_waiter *w = *link;
        if (__atomic_load_n(&w->lock->serving, __ATOMIC_SEQ_CST) != w->ticket) {
            link = &w->next;
            continue;
        }
        *link = w->next;
        __atomic_fetch_sub(&w->lock->remote_waiters, 1, __ATOMIC_SEQ_CST);
        take(w->lock, w->client);
        answer_waiter(w, DS_OK);
        free(w);
    }
}

static int unlock_by(int client, const struct ds_message *rq)
{
    int status = check_lock(rq);
    struct ticket_lock *lock = (struct ticket_lock *)(uintptr_t)rq->addr;
    if (status == DS_OK && __atomic_load_n(&lock->holder, __ATOMIC_RELAXED) != client + 1)
        status = DS_EPERM; /* releasing someone else's lock would corrupt it */
    if (status != DS_OK)
        return status;
    grant_forget(lock, client);
    __atomic_store_n(&lock->holder, 0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&lock->serving, 1, __ATOMIC_SEQ_CST);
    return DS_OK;
}

int unlock_request(struct server_conn *sc, const struct ds_message *rq)
{
    int status = unlock_by(sc->client, rq);
    server_answer(sc, rq->token, status, 0, false);
    if (status == DS_OK)
        locks_rescan();
    return status;
}

void locks_forget_range(uint64_t base, uint64_t size)
{
    for (struct lock_grant **link = &grants; *link;) {
        struct lock_grant *g = *link;
        uintptr_t at = (uintptr_t)g->lock;
        if (at < base || at - base >= size) {
            link = &g->next;
            continue;
        }
        *link = g->next;
        free(g);
    }
    for (struct lock_waiter **link = &waiters; *link;) {
        struct lock_waiter *w = *link;
        uintptr_t at = (uintptr_t)w->lock;
        if (at < base || at - base >= size) {
            link = &w->next;
            continue;
        }
        *link = w->next;
        armci_warn("data server: the mutexes rank %d waits for were destroyed", w->client);
        answer_waiter(w, DS_EFAULT);
        free(w);
    }
}

void locks_move_conn(const struct server_conn *from, struct server_conn *to)
{
    for (struct lock_waiter *w = waiters; w; w = w->next)
        if (w->sc == from)
            w->sc = to;
}

void locks_forget_conn(const struct server_conn *sc)
{
    for (struct lock_waiter **link = &waiters; *link;) {
        struct lock_waiter *w = *link;
        if (w->sc != sc) {
            link = &w->next;
            continue;
        }
        /* Its ticket stays taken: the lock moves on when its turn comes and goes unserved. */
        *link = w->next;
        armci_warn("data server: rank %d closed its connection while waiting for a lock",
                   sc->client);
        free(w);
    }
}

void locks_fini(void)
{
    while (grants) {
        struct lock_grant *g = grants;
        grants = g->next;
        free(g);
    }
    while (waiters) {
        struct lock_waiter *w = waiters;
        waiters = w->next;
        armci_warn("data server: rank %d still waiting for a lock at finalize", w->client);
        free(w);
    }
}
