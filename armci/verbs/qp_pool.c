/* RC QPs made ahead of need by background threads (qp_pool.h). */
#include "verbs/qp_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"

#define POOL_MAX_THREADS 4

struct pooled {
    struct ibv_qp *qp;
    struct rc_qp_caps caps; /* what the device granted it */
    struct pooled *next;
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
    int efd; /* counts the ready QPs (semaphore mode) */

    /* Shared with the threads, under lock. */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct pooled *ready;
    int nready;
    int making; /* creations under way */
    int asked;  /* takers that found the pool empty and wait for theirs */
    long created;
    int error; /* a creation failed: errno value, reported to the next taker */
    const char *failed_step;
    bool stop;
};

/* Creations wanted now: the pool's size plus the waiting takers, minus what is under way. */
static bool wants_more(const struct qp_pool *p)
{
    return !p->stop && !p->error && p->nready + p->making < p->keep + p->asked;
}

static void *maker(void *arg)
{
    struct qp_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && !wants_more(p))
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop)
            break;
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
            p->created++;
        }
        uint64_t one = 1;
        if (write(p->efd, &one, sizeof(one)) != sizeof(one))
            p->error = p->error ? p->error : errno;
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

struct ibv_qp *qp_pool_take(struct qp_pool *p, struct rc_qp_caps *granted)
{
    pthread_mutex_lock(&p->lock);
    if (p->error)
        armci_die(NULL, "%s (RC QP made ahead for %s) failed: %s", p->failed_step, p->who,
                  strerror(p->error));
    struct pooled *e = p->ready;
    if (!e) {
        p->asked++;
        start_threads(p, p->asked + p->keep);
        pthread_cond_signal(&p->wake);
        pthread_mutex_unlock(&p->lock);
        return NULL;
    }
    p->ready = e->next;
    p->nready--;
    if (p->asked > 0)
        p->asked--;
    uint64_t one;
    if (read(p->efd, &one, sizeof(one)) != sizeof(one))
        armci_warn("QP pool (%s): its counter is out of step", p->who);
    pthread_cond_signal(&p->wake); /* keep the pool full */
    pthread_mutex_unlock(&p->lock);
    struct ibv_qp *qp = e->qp;
    *granted = e->caps;
    free(e);
    return qp;
}

int qp_pool_fd(const struct qp_pool *p)
{
    return p->efd;
}

long qp_pool_created(const struct qp_pool *p)
{
    pthread_mutex_lock((pthread_mutex_t *)&p->lock);
    long n = p->created;
    pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
    return n;
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
    close(p->efd);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p);
}
