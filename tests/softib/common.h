/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test harness for the verbs-level tests. Every program here builds twice:
 * against softib and against rdma-core's libibverbs (run on Soft-RoCE with
 * tests/softib/run-rxe.sh). Checks that only make sense on softib
 * (counters, loss injection, fabric cleanup) run when softib's own symbols
 * are present in the process.
 */
#ifndef SOFTIB_TEST_COMMON_H
#define SOFTIB_TEST_COMMON_H

#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "softib/softib.h"

/* ---- results ---- */

extern int t_passed, t_failed, t_skipped;

void t_check(bool ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define CHECK(cond, ...) t_check((cond), __FILE__, __LINE__, __VA_ARGS__)
/* a check whose failure makes the rest meaningless */
#define REQUIRE(cond, ...)                             \
    do {                                               \
        bool ok_ = (cond);                             \
        t_check(ok_, __FILE__, __LINE__, __VA_ARGS__); \
        if (!ok_)                                      \
            t_abort();                                 \
    } while (0)
void t_skip(const char *what);
void t_abort(void) __attribute__((noreturn));
int t_summary(void); /* prints "N passed, M failed" and returns the exit code */

/* ---- environment ---- */

bool t_softib(void);    /* running on softib (not rdma-core) */
bool t_slow(void);      /* inside the rxe VM: software-emulated, keep loops short */
double t_timeout(void); /* seconds to wait for any one completion */
int t_counters(struct softib_counters *c);          /* softib only; 0 on success */
int t_fabric_stats(struct softib_fabric_stats *st); /* softib only */
bool t_fabric_file_gone(void); /* softib: no /dev/shm file left for our fabric */
/* softib: the fabric file this process has mapped (false if none) */
bool t_fabric_path(char *path, size_t len);

/* ---- device ---- */

struct t_dev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_port_attr port;
    bool roce;
    int gid_index;
    union ibv_gid gid;
};

void t_dev_open(struct t_dev *d);
void t_dev_close(struct t_dev *d);

/* What a peer needs to reach one of our QPs (and optionally a buffer). */
struct t_addr {
    uint32_t qpn;
    uint32_t psn;
    uint16_t lid;
    union ibv_gid gid;
    uint64_t addr;
    uint32_t rkey;
    uint64_t len;
};

void t_addr_of(const struct t_dev *d, const struct ibv_qp *qp, struct t_addr *a);
void t_av(const struct t_dev *d, const struct t_addr *peer, struct ibv_ah_attr *av);

#define T_ACCESS_ALL                                                             \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
     IBV_ACCESS_REMOTE_ATOMIC)

struct ibv_qp *t_qp(const struct t_dev *d, struct ibv_cq *cq, enum ibv_qp_type type, int depth,
                    struct ibv_srq *srq);
int t_rc_init(struct ibv_qp *qp, int access);
int t_rc_rtr(const struct t_dev *d, struct ibv_qp *qp, const struct t_addr *peer, int min_rnr);
int t_rc_rts(struct ibv_qp *qp, uint32_t psn, int timeout, int retry, int rnr_retry);
/* RESET..RTS with sane defaults (timeout 14, retry 7, rnr_retry 7) */
int t_rc_connect(const struct t_dev *d, struct ibv_qp *qp, const struct t_addr *peer, int access);
int t_ud_ready(struct ibv_qp *qp, uint32_t qkey);

/* Poll one completion, waiting at most t_timeout(); false on timeout. */
bool t_poll(struct ibv_cq *cq, struct ibv_wc *wc);
/* Poll one completion and check its status (and wr_id unless 0). */
bool t_expect(struct ibv_cq *cq, enum ibv_wc_status st, uint64_t wr_id, const char *what);
/* True when nothing arrives within `seconds`. */
bool t_quiet(struct ibv_cq *cq, double seconds);

int t_post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf, uint32_t len, uint32_t lkey,
                uint64_t raddr, uint32_t rkey, unsigned flags, uint64_t wr_id);
int t_post_recv(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey, uint64_t wr_id);
struct ibv_qp_attr t_query(struct ibv_qp *qp);

/* ---- processes ---- */

struct t_child {
    pid_t pid;
    int fd; /* our end of a socketpair with the child */
};

/* fork(); the child runs fn(fd, arg) and exits reporting its results. */
struct t_child t_spawn(void (*fn)(int fd, void *arg), void *arg);
void t_join(struct t_child *c); /* wait, and add the child's results to ours */
void t_send(int fd, const void *buf, size_t len);
void t_recv(int fd, void *buf, size_t len);
void t_sync(int fd); /* both sides call it: a rendezvous */

/* A target that sleeps while others read and write its memory: SIGUSR1
 * ends its sleep() (and nothing else); t_in_sleep says whether pid is
 * blocked in sleep() right now, t_wait_asleep waits (10 s) and checks it. */
void t_catch_usr1(void);
bool t_in_sleep(pid_t pid);
void t_wait_asleep(pid_t pid);

void t_fill(void *buf, size_t len, unsigned seed);
bool t_same(const void *buf, size_t len, unsigned seed); /* matches t_fill */
void *t_alloc(size_t len);
double t_now(void);

#endif
