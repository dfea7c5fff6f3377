/*
 * RC queue pairs made ahead of need, so that first contact with a peer costs
 * only the INIT->RTR->RTS transitions (the ODCM paper measures QP creation
 * at three times a transition).
 *
 * A pool keeps `keep` QPs created and in INIT, all with the same CQs, SRQ
 * and capabilities, and a thread of its own makes them: a caller never
 * waits for a creation it did not ask to wait for. When the pool is empty,
 * qp_pool_take returns NULL; a caller that would rather wait for a QP than
 * make one asks for it (qp_pool_ask, once) and takes it when the pool's
 * descriptor becomes readable (qp_pool_take_asked), so a progress engine
 * can sleep on it beside its completion channel. Only asking makes the pool
 * grow beyond `keep`: a QP is made for every ask, never for a failed take.
 * Several QPs asked for at once are made in parallel by several threads: in
 * a burst of first contacts (one process reaching many nodes), creations
 * overlap each other as they overlap the peers' (overlap protocol).
 *
 * The same threads also move QPs to RTR and RTS in the background
 * (qp_pool_connect), so that a process connecting to many peers at once
 * does not make the transitions one after the other either.
 *
 * A pool with keep 0 and no request never creates anything.
 */
#ifndef ARMCI_VERBS_QP_POOL_H
#define ARMCI_VERBS_QP_POOL_H

#include <infiniband/verbs.h>

#include "verbs/rc_qp.h"

struct qp_pool;

/* `who` names the pool's QPs in messages; caps as for rc_qp_create (granted caps after). */
struct qp_pool *qp_pool_create(const char *who, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
                               struct ibv_srq *srq, struct rc_qp_caps *caps, int keep, int threads);
void qp_pool_destroy(struct qp_pool *p);

/* A QP in INIT (with the caps it was granted), or NULL if none is ready. */
struct ibv_qp *qp_pool_take(struct qp_pool *p, struct rc_qp_caps *granted);

/* One more QP is wanted by a caller that will take it later with qp_pool_take_asked. */
void qp_pool_ask(struct qp_pool *p);

/* As qp_pool_take, for a caller that asked: a QP taken settles its ask. */
struct ibv_qp *qp_pool_take_asked(struct qp_pool *p, struct rc_qp_caps *granted);

/*
 * Moves qp (in INIT) to RTR towards `remote` and then to RTS, in the
 * background; `tag` comes back from qp_pool_connected when it is done.
 */
void qp_pool_connect(struct qp_pool *p, struct ibv_qp *qp, const struct verbs_addr *remote,
                     uint32_t my_psn, void *tag);
/* The tag of a connection qp_pool_connect has finished, or NULL. */
void *qp_pool_connected(struct qp_pool *p);

/* Readable while a QP is ready to take or a connection finished (a hint: do not read it). */
int qp_pool_fd(const struct qp_pool *p);

#endif
