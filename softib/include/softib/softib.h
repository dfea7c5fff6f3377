/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * softib: a userspace InfiniBand verbs device.
 *
 * libsoftib exports the libibverbs entry points (see <infiniband/verbs.h>)
 * plus the few softib_* functions below, which let tests and tools observe
 * what went through the device. The structs are versioned: a caller sets
 * `size` to the sizeof it was compiled with and softib fills at most that
 * many bytes, so fields are only ever appended.
 */
#ifndef SOFTIB_SOFTIB_H
#define SOFTIB_SOFTIB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOFTIB_COUNTERS_VERSION 1

/*
 * Per-process counters. "Sender" counters are charged to the process that
 * posted the work request (softib executes it there); "receiver" counters
 * to the process owning the receiving QP.
 */
struct softib_counters {
    uint32_t version;         /* SOFTIB_COUNTERS_VERSION, set by softib */
    uint32_t size;            /* set by the caller: sizeof(struct softib_counters) */
    uint64_t contexts_opened; /* ibv_open_device calls */
    uint64_t qp_created_rc;   /* ibv_create_qp, by type */
    uint64_t qp_created_ud;
    uint64_t qp_destroyed_rc; /* ibv_destroy_qp (and close/reclaim), by type */
    uint64_t qp_destroyed_ud;
    uint64_t qp_live_rc; /* created - destroyed */
    uint64_t qp_live_ud;
    uint64_t qp_modifies;   /* successful ibv_modify_qp calls */
    uint64_t mr_registered; /* successful ibv_reg_mr* */
    uint64_t mr_deregistered;
    uint64_t sends; /* sender: SEND/SEND_WITH_IMM executed (RC and UD) */
    uint64_t send_bytes;
    uint64_t recvs; /* receiver: successful receive completions */
    uint64_t recv_bytes;
    uint64_t rdma_writes; /* sender: RDMA WRITE (with or without imm) */
    uint64_t rdma_write_bytes;
    uint64_t rdma_reads; /* sender: RDMA READ */
    uint64_t rdma_read_bytes;
    uint64_t atomics;           /* sender: FETCH_AND_ADD + CMP_AND_SWP */
    uint64_t ud_sends;          /* sender: UD datagrams posted and executed */
    uint64_t ud_recvs;          /* receiver: UD datagrams delivered */
    uint64_t ud_drops_nobuf;    /* receiver: UD datagram dropped, no receive posted */
    uint64_t ud_drops_injected; /* sender: dropped by SOFTIB_UD_LOSS */
    uint64_t ud_drops_other;    /* sender: no such QP, wrong address or Q_Key */
    uint64_t ud_reordered;      /* sender: held back by SOFTIB_UD_REORDER */
    uint64_t rnr_retries;       /* sender: RNR NAKs waited out */
    uint64_t transport_retries; /* sender: lost packets retransmitted (peer absent/not ready) */
    uint64_t wc_errors;         /* error completions other than flushes */
    uint64_t wc_flushed;        /* IBV_WC_WR_FLUSH_ERR completions */
    uint64_t cq_overruns;       /* completions lost because a CQ was full */
    uint64_t cq_events;         /* completion events returned by ibv_get_cq_event */
    uint64_t async_events;      /* async events queued for this process */
    uint64_t ud_duplicated;     /* sender: delivered twice by SOFTIB_UD_DUP */
    uint64_t link_down_drops;   /* sender: UD datagrams lost to a port down (SOFTIB_PORT_DOWN) */
    uint64_t rc_breaks;         /* sender: RC work requests failed by SOFTIB_RC_BREAK */
};

/*
 * Counters of the calling process: all its open contexts plus those it has
 * closed. Set out->size first. Returns 0 or an errno value (EINVAL when
 * out is NULL or out->size is too small to hold the header).
 */
int softib_get_counters(struct softib_counters *out);

#define SOFTIB_FABRIC_STATS_VERSION 1

/* What the fabric holds right now, for every process on it. */
struct softib_fabric_stats {
    uint32_t version; /* SOFTIB_FABRIC_STATS_VERSION, set by softib */
    uint32_t size;    /* set by the caller: sizeof(struct softib_fabric_stats) */
    uint32_t contexts;
    uint32_t qps;
    uint32_t cqs;
    uint32_t srqs;
    uint32_t mrs;
    uint32_t pad;
    uint64_t heap_used; /* bytes of queue memory allocated in the fabric file */
    uint64_t heap_size;
};

/*
 * Snapshot of the fabric this process has open (it must have a device open:
 * ENODEV otherwise). Resources of dead processes are reclaimed first, so the
 * counts only cover live ones. Returns 0 or an errno value.
 */
int softib_fabric_stats(struct softib_fabric_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* SOFTIB_SOFTIB_H */
