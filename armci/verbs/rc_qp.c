#include "verbs/rc_qp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/error.h"

int rc_qp_open(struct ibv_cq *send_cq, struct ibv_cq *recv_cq, struct ibv_srq *srq,
               struct rc_qp_caps *caps, struct ibv_qp **out)
{
    int sge = caps->max_send_sge ? caps->max_send_sge : RC_QP_MAX_SGE;
    if (sge > vdev.attr.max_sge)
        sge = vdev.attr.max_sge;
    struct ibv_qp_init_attr attr = {
        .send_cq = send_cq,
        .recv_cq = recv_cq,
        .srq = srq,
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 0,
        .cap =
            {
                .max_send_wr = (uint32_t)caps->max_send_wr,
                .max_recv_wr = srq ? 0 : (uint32_t)caps->max_recv_wr,
                .max_send_sge = (uint32_t)(sge < 2 ? 2 : sge),
                .max_recv_sge = 1,
                .max_inline_data = (uint32_t)caps->max_inline,
            },
    };
    *out = ibv_create_qp(vdev.pd, &attr);
    if (!*out)
        return errno ? errno : ENOMEM;
    caps->max_send_wr = (int)attr.cap.max_send_wr;
    caps->max_inline = (int)attr.cap.max_inline_data;
    caps->max_send_sge = (int)attr.cap.max_send_sge;
    return 0;
}

struct ibv_qp *rc_qp_create(struct ibv_cq *send_cq, struct ibv_cq *recv_cq, struct ibv_srq *srq,
                            struct rc_qp_caps *caps, const char *peer)
{
    struct ibv_qp *qp;
    int rc = rc_qp_open(send_cq, recv_cq, srq, caps, &qp);
    if (rc)
        armci_die(NULL, "ibv_create_qp (RC, to %s, %d send WRs) failed: %s", peer,
                  caps->max_send_wr, strerror(rc));
    return qp;
}

int rc_qp_init_state(struct ibv_qp *qp)
{
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_INIT,
        .pkey_index = 0,
        .port_num = vdev.port,
        .qp_access_flags =
            IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
    };
    int rc = ibv_modify_qp(qp, &attr,
                           IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    return rc > 0 ? rc : rc ? errno : 0;
}

void rc_qp_to_init(struct ibv_qp *qp, const char *peer)
{
    int rc = rc_qp_init_state(qp);
    if (rc)
        armci_die(NULL, "ibv_modify_qp RESET->INIT (QP %u, to %s) failed: %s", qp->qp_num, peer,
                  strerror(rc));
}

/* Outstanding RDMA reads/atomics per QP: what the device allows, at most 16. */
static uint8_t rd_atomic_limit(int device_max)
{
    return (uint8_t)(device_max <= 0 ? 1 : device_max > 16 ? 16 : device_max);
}

int rc_qp_rtr_state(struct ibv_qp *qp, const struct verbs_addr *remote)
{
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = vdev.mtu < IBV_MTU_4096 ? vdev.mtu : IBV_MTU_4096,
        .dest_qp_num = remote->qpn,
        .rq_psn = remote->psn,
        .max_dest_rd_atomic = rd_atomic_limit(vdev.attr.max_qp_rd_atom),
        .min_rnr_timer = 12, /* 0.64 ms: a busy server re-posts receives quickly */
    };
    verbs_fill_ah_attr(&attr.ah_attr, remote);
    int rc = ibv_modify_qp(qp, &attr,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    return rc > 0 ? rc : rc ? errno : 0;
}

int rc_qp_rts_state(struct ibv_qp *qp, uint32_t my_psn)
{
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_RTS,
        .sq_psn = my_psn,
        /* A peer silent for timeout x (retry_cnt + 1) is lost (17, 6: 3.8 s, long enough
         * for a link that flaps for a second or two to come back). Never 7: the spec makes
         * only rnr_retry 7 infinite, but rdma_rxe retries forever with retry_cnt 7 too, and a
         * host that died would be waited for forever. */
        .timeout = (uint8_t)cfg.ib_timeout,
        .retry_cnt = (uint8_t)cfg.ib_retry,
        .rnr_retry = 7, /* infinite: receiver-not-ready is back-pressure, not an error */
        .max_rd_atomic = rd_atomic_limit(vdev.attr.max_qp_init_rd_atom),
    };
    int rc = ibv_modify_qp(qp, &attr,
                           IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                               IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
    return rc > 0 ? rc : rc ? errno : 0;
}

void rc_qp_to_rtr(struct ibv_qp *qp, const struct verbs_addr *remote, const char *peer)
{
    int rc = rc_qp_rtr_state(qp, remote);
    if (rc)
        armci_die(NULL, "ibv_modify_qp INIT->RTR (QP %u, to %s) failed: %s", qp->qp_num, peer,
                  strerror(rc));
}

void rc_qp_to_rts(struct ibv_qp *qp, uint32_t my_psn, const char *peer)
{
    int rc = rc_qp_rts_state(qp, my_psn);
    if (rc)
        armci_die(NULL, "ibv_modify_qp RTR->RTS (QP %u, to %s) failed: %s", qp->qp_num, peer,
                  strerror(rc));
}

void rc_qp_to_error(struct ibv_qp *qp, const char *peer)
{
    struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
    int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
    if (rc)
        armci_warn("ibv_modify_qp to ERR (QP %u, to %s) failed: %s", qp->qp_num, peer,
                   strerror(rc));
}

void rc_qp_destroy(struct ibv_qp *qp, const char *peer)
{
    if (qp && ibv_destroy_qp(qp))
        armci_warn("ibv_destroy_qp (QP to %s) failed: %s", peer, strerror(errno));
}

uint32_t rc_random_psn(void)
{
    static __thread unsigned seed;
    if (!seed)
        seed = (unsigned)time(NULL) ^ (unsigned)getpid() * 2654435761u;
    return (uint32_t)rand_r(&seed) & 0xffffff;
}
