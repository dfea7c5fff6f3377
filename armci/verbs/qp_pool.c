/* RC QPs made ahead of need by background threads (qp_pool.h). */
#include "verbs/qp_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/fifo.h"
#include "core/error.h"
#include "core/util.h"

#define POOL_MAX_THREADS 4

struct pooled {
    struct ibv_qp *qp;
    struct rc_qp_caps caps; /* what the device granted it */
    struct pooled *next;
};

/* A QP to move to RTR and RTS (qp_pool_connect). */
struct transition {
    struct ibv_qp *qp;
    struct verbs_addr remote;
    uint32_t my_psn;
    void *tag;
    struct transition *next;
};

struct qp_pool {
    const char *who;
    struct ibv_cq *send_cq;
    struct ibv_cq *recv_cq;
    struct ibv_srq *srq;
    struct rc_qp_caps caps; /* as asked; every QP gets the same */
    int keep;
    int nthreads;
    int started;
    pthread_t threads[POOL_MAX_THREADS];
    int efd; /* readable while ready QPs or finished transitions wait (semaphore mode) */

    /* Shared with the threads, under lock. */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct pooled *ready;
    int nready;
    int making;                          /* creations under way */
    int asked;                           /* takers that found the pool empty and wait for theirs */
    struct transition *todo, *todo_tail; /* transitions to make, in order */
    struct transition *finished;         /* and made */
    int error; /* a creation failed: errno value, reported to the next taker */
    const char *failed_step;
    bool stop;
};

/* Creations wanted now: the pool's size plus the waiting takers, minus what is under way. */
static bool wants_more(const struct qp_pool *p)
{
    return !p->stop && !p->error && p->nready + p->making < p->keep + p->asked;
}

static void signal_fd(struct qp_pool *p)
{
    uint64_t one = 1;
    if (write(p->efd, &one, sizeof(one)) != sizeof(one) && !p->error)
        p->error = errno;
}

/* Makes one transition (lock not held); returns an errno value and names the failed step. */
static int transition(struct transition *t, const char **step)
{
    *step = "ibv_modify_qp INIT->RTR";
    int rc = rc_qp_rtr_state(t->qp, &t->remote);
    if (rc)
        return rc;
    *step = "ibv_modify_qp RTR->RTS";
    return rc_qp_rts_state(t->qp, t->my_psn);
}

static void *maker(void *arg)
{
    struct qp_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && !p->todo && !wants_more(p))
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop)
            break;
        /* Connections first: someone waits for them. */
        if (p->todo) {
            struct transition *t = p->todo;
            FIFO_DROP_HEAD(p->todo, p->todo_tail, next);
            pthread_mutex_unlock(&p->lock);
            const char *step;
            int rc = transition(t, &step);
            pthread_mutex_lock(&p->lock);
            if (rc) {
                p->error = rc;
                p->failed_step = step;
            }
            t->next = p->finished;
            p->finished = t;
            signal_fd(p);
            continue;
        }
        p->making++;
        pthread_mutex_unlock(&p->lock);

        struct rc_qp_caps caps = p->caps;
        struct ibv_qp *qp = NULL;
        const char *step = "ibv_create_qp";
        int rc = rc_qp_open(p->send_cq, p->recv_cq, p->srq, &caps, &qp);
        if (!rc) {
            step = "ibv_modify_qp RESET->INIT";
            rc = rc_qp_init_state(qp);
        }
        if (rc && qp) {
            ibv_destroy_qp(qp);
            qp = NULL;
        }

        pthread_mutex_lock(&p->lock);
        p->making--;
        if (rc) {
            p->error = rc;
            p->failed_step = step;
        } else {
            struct pooled *e = xmalloc(sizeof(*e));
            *e = (struct pooled){qp, caps, p->ready};
            p->ready = e;
            p->nready++;
        }
        signal_fd(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Threads start on first need: a process that never connects makes none (lock held). */
static void start_threads(struct qp_pool *p, int wanted)
{
    while (p->started < wanted && p->started < p->nthreads) {
        int rc = pthread_create(&p->threads[p->started], NULL, maker, p);
        if (rc)
            armci_die(NULL, "cannot start a QP maker thread (%s): %s", p->who, strerror(rc));
        p->started++;
    }
}

struct qp_pool *qp_pool_create(const char *who, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
                               struct ibv_srq *srq, struct rc_qp_caps *caps, int keep, int threads)
{
    struct qp_pool *p = xcalloc(1, sizeof(*p));
    *p = (struct qp_pool){.who = who,
                          .send_cq = send_cq,
                          .recv_cq = recv_cq,
                          .srq = srq,
                          .caps = *caps,
                          .keep = keep,
                          .nthreads = threads < 1                  ? 1
                                      : threads > POOL_MAX_THREADS ? POOL_MAX_THREADS
                                                                   : threads};
    p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
    if (p->efd < 0)
        armci_die("ARMCI_Init", "eventfd for the QP pool (%s) failed: %s", who, strerror(errno));
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (keep > 0) {
        pthread_mutex_lock(&p->lock);
        start_threads(p, keep);
        pthread_mutex_unlock(&p->lock);
    }
    return p;
}

/* Takes one token of the descriptor's count (each ready QP or finished transition has one). */
static void take_token(struct qp_pool *p)
{
    uint64_t one;
    if (read(p->efd, &one, sizeof(one)) != sizeof(one))
        armci_warn("QP pool (%s): its counter is out of step", p->who);
}

static void die_if_failed(const struct qp_pool *p)
{
    if (p->error)
        armci_die(NULL, "%s (RC QP of %s, made in the background) failed: %s", p->failed_step,
                  p->who, strerror(p->error));
}

void qp_pool_connect(struct qp_pool *p, struct ibv_qp *qp, const struct verbs_addr *remote,
                     uint32_t my_psn, void *tag)
{
    struct transition *t = xmalloc(sizeof(*t));
    *t = (struct transition){qp, *remote, my_psn, tag, NULL};
    pthread_mutex_lock(&p->lock);
    FIFO_PUSH(p->todo, p->todo_tail, t, next);
    start_threads(p, p->nthreads);
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

void *qp_pool_connected(struct qp_pool *p)
{
    pthread_mutex_lock(&p->lock);
    die_if_failed(p);
    struct transition *t = p->finished;
    if (t) {
        p->finished = t->next;
        take_token(p);
    }
    pthread_mutex_unlock(&p->lock);
    if (!t)
        return NULL;
    void *tag = t->tag;
    free(t);
    return tag;
}

/* A ready QP or NULL; `for_asker`: the caller asked for one (qp_pool_ask) and this is it. */
static struct ibv_qp *take(struct qp_pool *p, struct rc_qp_caps *granted, bool for_asker)
{
    pthread_mutex_lock(&p->lock);
    die_if_failed(p);
    struct pooled *e = p->ready;
    if (e) {
        p->ready = e->next;
        p->nready--;
        if (for_asker && p->asked > 0)
            p->asked--;
        take_token(p);
    } else {
        start_threads(p, p->asked + p->keep); /* the first need starts them */
    }
    pthread_cond_signal(&p->wake); /* keep the pool full */
    pthread_mutex_unlock(&p->lock);
    if (!e)
        return NULL;
    struct ibv_qp *qp = e->qp;
    *granted = e->caps;
    free(e);
    return qp;
}

struct ibv_qp *qp_pool_take(struct qp_pool *p, struct rc_qp_caps *granted)
{
    return take(p, granted, false);
}

struct ibv_qp *qp_pool_take_asked(struct qp_pool *p, struct rc_qp_caps *granted)
{
    return take(p, granted, true);
}

void qp_pool_ask(struct qp_pool *p)
{
    pthread_mutex_lock(&p->lock);
    die_if_failed(p);
    p->asked++;
    start_threads(p, p->asked + p->keep);
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

int qp_pool_fd(const struct qp_pool *p)
{
    return p->efd;
}

static void free_transitions(struct transition *t)
{
    while (t) {
        struct transition *next = t->next;
        free(t);
        t = next;
    }
}

void qp_pool_destroy(struct qp_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    while (p->ready) {
        struct pooled *e = p->ready;
        p->ready = e->next;
        if (ibv_destroy_qp(e->qp))
            armci_warn("ibv_destroy_qp (pooled QP of %s) failed: %s", p->who, strerror(errno));
        free(e);
    }
    /* Transitions not taken back: their QPs belong to connections, which destroy them. */
    free_transitions(p->todo);
    free_transitions(p->finished);
    close(p->efd);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p);
}
