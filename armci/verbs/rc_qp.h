/*
 * Reliable-connected queue pairs: creation and the RESET->INIT->RTR->RTS
 * transitions, with the attributes both ends of an ARMCI connection use.
 * Every verbs failure ends the job with the verb and the peer named.
 */
#ifndef ARMCI_VERBS_RC_QP_H
#define ARMCI_VERBS_RC_QP_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "verbs/device.h"

struct rc_qp_caps {
    int max_send_wr;
    int max_recv_wr; /* ignored with an SRQ */
    int max_inline;
    int max_send_sge; /* 0: as many as the device allows, at most RC_QP_MAX_SGE */
};

/* Gather lists of up to this many entries: a header and rows of a strided transfer. */
#define RC_QP_MAX_SGE 32

/* The same two steps returning an errno value instead of ending the job (0: done). */
int rc_qp_open(struct ibv_cq *send_cq, struct ibv_cq *recv_cq, struct ibv_srq *srq,
               struct rc_qp_caps *caps, struct ibv_qp **out);
int rc_qp_init_state(struct ibv_qp *qp);
int rc_qp_rtr_state(struct ibv_qp *qp, const struct verbs_addr *remote);
int rc_qp_rts_state(struct ibv_qp *qp, uint32_t my_psn);

/* Creates an RC QP; caps is updated with what the device granted. */
struct ibv_qp *rc_qp_create(struct ibv_cq *send_cq, struct ibv_cq *recv_cq, struct ibv_srq *srq,
                            struct rc_qp_caps *caps, const char *peer);
void rc_qp_to_init(struct ibv_qp *qp, const char *peer);
void rc_qp_to_rtr(struct ibv_qp *qp, const struct verbs_addr *remote, const char *peer);
void rc_qp_to_rts(struct ibv_qp *qp, uint32_t my_psn, const char *peer);
/* Moves qp to the error state: what it has posted completes at once, flushed. */
void rc_qp_to_error(struct ibv_qp *qp, const char *peer);
void rc_qp_destroy(struct ibv_qp *qp, const char *peer);

/* A random initial packet sequence number (24 bits). */
uint32_t rc_random_psn(void);

#endif
