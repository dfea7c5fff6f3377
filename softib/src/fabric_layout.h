/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The layout of the fabric file, shared by every process of a job: its
 * header, the tables of contexts (one LID each), QPs with their receive
 * queues, CQ rings, SRQs and MRs, and the inline accessors that find a slot.
 * Everything inside is addressed by offset, since each process maps the
 * file at its own address. Types and inline functions only, with no .c
 * partner (as rdma-core rxe's rxe_hdr.h): the files that work on the file
 * (fabric.c, heap.c, lock.c, reclaim.c) all read it and none of them owns
 * it, so they need not include one another's headers to share it.
 */
#ifndef SIB_FABRIC_LAYOUT_H
#define SIB_FABRIC_LAYOUT_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "softib/softib.h"

#define SIB_MAGIC   0x3130626974666f73ull /* "softib01" */
#define SIB_VERSION 8

#define SIB_MAX_CTX       1024
#define SIB_QP_SLOT_BITS  18
#define SIB_MAX_QP        (1u << SIB_QP_SLOT_BITS)
#define SIB_MAX_CQ        8192
#define SIB_MAX_SRQ       2048
#define SIB_MAX_MR        65536
#define SIB_MAX_SGE       32
#define SIB_MAX_WR        16384
#define SIB_MAX_CQE       (1u << 20)
#define SIB_MAX_INLINE    512
#define SIB_MAX_MSG       (1u << 30)
#define SIB_MAX_RD_ATOMIC 16
#define SIB_GRH_BYTES     40
#define SIB_ASYNC_RING    64
#define SIB_HEAP_CLASSES  40

typedef uint64_t sib_off; /* offset from the start of the file; 0 = none */

struct sib_lock {
    pthread_mutex_t m;
};

/* An abstract unix socket name (autobound: NUL + 5 hex digits). */
struct sib_addr {
    uint8_t len;
    char name[15];
};

struct sib_async {
    uint32_t type; /* enum ibv_event_type */
    uint32_t kind; /* enum sib_kind of the element, 0 = port */
    uint32_t slot;
    uint32_t gen;
};

/* A process's open device: the equivalent of a host port with its LID. */
struct sib_fctx {
    uint32_t in_use;
    uint32_t gen;
    int32_t pid;
    uint32_t lid;
    uint64_t start_time; /* /proc/<pid>/stat starttime: tells pid reuse apart */
    struct sib_addr async_addr;
    struct sib_lock ev_lock; /* async event ring */
    uint32_t ev_lock_ready;
    uint32_t ev_head, ev_tail;
    uint32_t ev_lost;
    struct sib_async ev[SIB_ASYNC_RING];
    struct softib_counters cnt; /* updated atomically, also by other processes */
    /* SOFTIB_PORT_DOWN: the port is down from .. until (sib_now_ns; 0, 0: never). Read by
     * every process that sends to this one: while either end's port is down, nothing passes. */
    uint64_t down_from_ns, down_until_ns;
};

/* Whether the port of context fc is down at time now (ns, sib_now_ns). */
static inline bool sib_port_down(const struct sib_fctx *fc, uint64_t now)
{
    uint64_t from = __atomic_load_n(&fc->down_from_ns, __ATOMIC_ACQUIRE);
    uint64_t until = __atomic_load_n(&fc->down_until_ns, __ATOMIC_ACQUIRE);

    return from && now >= from && now < until;
}

/* A receive queue: ring of WQEs of `stride` bytes each. */
struct sib_rq {
    sib_off ring;
    uint64_t ring_bytes;
    uint32_t cap;
    uint32_t max_sge;
    uint32_t stride;
    uint32_t head, tail; /* free-running */
};

struct sib_rwqe {
    uint64_t wr_id;
    uint32_t num_sge;
    uint32_t pad;
    struct ibv_sge sge[];
};

struct sib_fqp {
    struct sib_lock lock; /* responder side: state, receive queue, PSNs */
    uint32_t lock_ready;
    uint32_t qpn; /* 0: free */
    uint32_t gen; /* 6 bits, part of the QPN */
    uint32_t owner;
    int32_t pid;
    uint64_t start_time; /* the owner's, as in its context */
    uint8_t type;        /* IBV_QPT_RC / IBV_QPT_UD */
    uint8_t state;       /* enum ibv_qp_state */
    uint8_t sq_sig_all;
    uint8_t port;
    uint16_t pkey_index;
    uint8_t path_mtu;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t min_rnr_timer;
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint8_t overrun_reported;
    uint8_t deaf;      /* SOFTIB_UD_DEAF_RESET: reports RTS, drops every datagram */
    uint8_t ud_resets; /* times this UD QP was reset */
    uint32_t access;
    uint32_t qkey;
    uint32_t dest_qpn;
    uint32_t rq_psn;           /* next PSN expected */
    uint32_t sq_psn;           /* next PSN to send */
    uint32_t send_cq, recv_cq; /* CQ slots */
    uint32_t srq;              /* SRQ slot + 1, 0 = none */
    uint64_t pd;
    struct ibv_qp_cap cap;
    struct ibv_ah_attr ah; /* RC destination path */
    struct sib_rq rq;
    uint64_t sq_retired; /* send WQEs whose slot is free again (owner's poll_cq) */
    uint64_t owner_ptr;  /* struct sib_qp * in the owner process */
};

/* A completion as stored in a CQ ring. */
struct sib_cqe {
    struct ibv_wc wc;
    uint32_t qp_slot; /* send completions: QP whose slot to retire */
    uint32_t is_send;
    uint64_t seq;
};

struct sib_fcq {
    struct sib_lock lock;
    uint32_t lock_ready;
    uint32_t in_use;
    uint32_t gen;
    uint32_t owner;
    uint32_t cap;
    uint32_t head, tail; /* free-running; tail written under lock */
    uint32_t armed;      /* 0, 1 = any completion, 2 = solicited only */
    uint32_t ev_pending; /* an event was generated and not yet returned */
    uint32_t overrun;
    struct sib_addr chan; /* len 0: no channel */
    sib_off ring;
    uint64_t ring_bytes;
    uint64_t owner_ptr; /* struct sib_cq * */
};

struct sib_fsrq {
    struct sib_lock lock;
    uint32_t lock_ready;
    uint32_t in_use;
    uint32_t gen;
    uint32_t owner;
    uint32_t limit; /* armed limit, 0 = disarmed */
    uint32_t pad;
    uint64_t pd;
    struct sib_rq rq;
    uint64_t owner_ptr;
};

/* MR slots are read without locks under a sequence counter; they are
 * written under the MR lock (sib_hdr.mr_lock), so a reader that keeps
 * finding the counter odd can take the lock instead of spinning. */
struct sib_fmr {
    uint32_t seq; /* odd while being written */
    uint32_t lkey;
    uint32_t rkey;
    uint32_t access;
    uint32_t owner;
    int32_t pid;
    uint64_t start_time; /* the owner's: pid and start time name the process */
    uint64_t pd;
    uint64_t addr;
    uint64_t iova;
    uint64_t length;
    uint32_t gen;
    uint32_t pad;
};

struct sib_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t hdr_bytes;
    uint64_t size;
    uint64_t id;   /* random: tells fabric incarnations apart */
    uint32_t roce; /* link layer chosen by the creator */
    uint32_t mtu_enum;
    uint64_t pidns;       /* inode of the creator's pid namespace: where pids mean something */
    struct sib_lock lock; /* tables and heap */
    struct sib_lock atomic_lock;
    struct sib_lock mr_lock; /* MR slot writers; readers that gave up spinning */
    uint32_t next_lid;
    uint32_t next_qp_slot; /* QP slots are handed out in turn across the fabric */
    uint32_t qp_window;    /* ... among the first qp_window slots (qp.c: qp_slot_alloc) */
    /* One past the highest slot ever handed out of each table (global lock): scans that
     * look for a context's objects stop there instead of reading the whole table (7 MB). */
    uint32_t ctx_used, cq_used, srq_used, mr_used;
    sib_off ctx_off, qp_off, cq_off, srq_off, mr_off;
    sib_off heap_start, heap_brk, heap_end;
    uint64_t heap_used;
    sib_off free_list[SIB_HEAP_CLASSES];
    uint32_t ports_go_down; /* a context set a SOFTIB_PORT_DOWN window: senders check ports */
};

/* Process-local view of a mapped fabric. */
struct sib_fabric {
    char path[128];
    int fd;
    uint8_t *base;
    uint64_t size;
    struct sib_hdr *hdr;
    int refs; /* open contexts in this process */
    int pid;  /* process that mapped it (fork detection) */
};

static inline void *sib_ptr(const struct sib_fabric *f, sib_off off)
{
    return off ? (void *)(f->base + off) : NULL;
}

static inline struct sib_fctx *sib_fctx_at(const struct sib_fabric *f, uint32_t i)
{
    return (struct sib_fctx *)(f->base + f->hdr->ctx_off) + i;
}
static inline struct sib_fqp *sib_fqp_at(const struct sib_fabric *f, uint32_t i)
{
    return (struct sib_fqp *)(f->base + f->hdr->qp_off) + i;
}
static inline struct sib_fcq *sib_fcq_at(const struct sib_fabric *f, uint32_t i)
{
    return (struct sib_fcq *)(f->base + f->hdr->cq_off) + i;
}
static inline struct sib_fsrq *sib_fsrq_at(const struct sib_fabric *f, uint32_t i)
{
    return (struct sib_fsrq *)(f->base + f->hdr->srq_off) + i;
}
static inline struct sib_fmr *sib_fmr_at(const struct sib_fabric *f, uint32_t i)
{
    return (struct sib_fmr *)(f->base + f->hdr->mr_off) + i;
}

/*
 * Writing an MR slot, MR lock held. An odd counter found here was left by a
 * writer that died mid-update (writers hold the lock): start from the next
 * odd value, so the end of this write makes it even again.
 */
static inline void sib_fmr_write_begin(struct sib_fmr *m)
{
    uint32_t s = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);

    __atomic_fetch_add(&m->seq, (s & 1) ? 2 : 1, __ATOMIC_ACQ_REL);
}

static inline void sib_fmr_write_end(struct sib_fmr *m)
{
    __atomic_fetch_add(&m->seq, 1, __ATOMIC_ACQ_REL);
}

/* Kill an MR slot's keys (MR lock held); readers retry around the counter. */
static inline void sib_fmr_clear(struct sib_fmr *m)
{
    sib_fmr_write_begin(m);
    m->lkey = m->rkey = 0;
    sib_fmr_write_end(m);
}

/* Slot idx of a table is handed out (global lock held): scans go up to it. */
static inline void sib_slot_used(uint32_t *used, uint32_t idx)
{
    if (idx >= *used)
        *used = idx + 1;
}

#endif /* SIB_FABRIC_LAYOUT_H */
