/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A writer of an MR slot that dies mid-update leaves the slot's sequence
 * counter odd; readers of that slot must not spin forever. A child process
 * plays the dying writer through the fabric mapping it inherited:
 *
 *  1. it takes the MR lock, as writers do, makes the counter odd, scribbles
 *     on the rkey and _exit()s holding the lock;
 *  2. it makes the counter odd without the lock (a torn slot) and _exit()s;
 *  3. it makes the counter of a free slot odd, the slot the next
 *     registration takes.
 *
 * 1 and 2: an RDMA WRITE naming the slot's rkey completes with
 * IBV_WC_REM_ACCESS_ERR (the slot cannot be trusted, so its keys are
 * dead) and writes nothing. 3: the registration that takes the slot works,
 * and so does an RDMA WRITE through it. A hang is a failure (alarm).
 */
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabric.h"

#define LEN 4096

static struct sib_fabric fab; /* base and header only: the inherited mapping */

static void map_fabric(void)
{
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    unsigned long start = 0;

    REQUIRE(f, "/proc/self/maps");
    while (fgets(line, sizeof(line), f))
        if (strstr(line, "/dev/shm/softib-fabric-") && sscanf(line, "%lx-", &start) == 1)
            break;
    fclose(f);
    REQUIRE(start, "the fabric is mapped");
    fab.base = (uint8_t *)start;
    fab.hdr = (struct sib_hdr *)fab.base;
    REQUIRE(fab.hdr->magic == SIB_MAGIC && fab.hdr->version == SIB_VERSION, "fabric header");
}

static void on_alarm(int sig)
{
    (void)sig;
    (void)!write(2, "FAIL: an MR lookup hangs on a dead writer's slot\n", 50);
    _exit(1);
}

struct pair {
    struct ibv_cq *cq;
    struct ibv_qp *a, *b;
};

/* Two QPs of this process connected to each other. */
static void pair_up(struct t_dev *d, struct pair *p)
{
    struct t_addr aa, ba;

    p->cq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
    REQUIRE(p->cq, "create_cq");
    p->a = t_qp(d, p->cq, IBV_QPT_RC, 8, NULL);
    p->b = t_qp(d, p->cq, IBV_QPT_RC, 8, NULL);
    t_addr_of(d, p->a, &aa);
    t_addr_of(d, p->b, &ba);
    REQUIRE(t_rc_connect(d, p->a, &ba, T_ACCESS_ALL) == 0 &&
                t_rc_connect(d, p->b, &aa, T_ACCESS_ALL) == 0,
            "connect");
}

static void pair_down(struct pair *p)
{
    CHECK(ibv_destroy_qp(p->a) == 0 && ibv_destroy_qp(p->b) == 0 && ibv_destroy_cq(p->cq) == 0,
          "pair teardown");
}

enum death { LOCKED, TORN, FREE_SLOT };

/* The dying writer, in a child: it shares the fabric mapping. */
static void die_writing(uint32_t slot, enum death how)
{
    pid_t pid;
    int status;

    fflush(stdout);
    pid = fork();
    REQUIRE(pid >= 0, "fork");
    if (pid == 0) {
        struct sib_fmr *m = sib_fmr_at(&fab, slot);

        if (how == LOCKED && pthread_mutex_lock(&fab.hdr->mr_lock.m))
            _exit(2);
        __atomic_fetch_add(&m->seq, 1, __ATOMIC_ACQ_REL);
        if (how != FREE_SLOT)
            m->rkey ^= 0x5a00; /* half-way through rewriting the key */
        _exit(0);
    }
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer died as planned");
    REQUIRE(sib_fmr_at(&fab, slot)->seq & 1, "the slot's counter is left odd");
}

static void dead_writer(struct t_dev *d, enum death how, const char *what)
{
    uint8_t *src = t_alloc(LEN), *dst = t_alloc(3 * LEN);
    struct ibv_mr *smr, *dmr;
    struct pair p;
    uint32_t slot;

    printf("%s\n", what);
    memset(src, 0xab, LEN);
    memset(dst, 0x11, 3 * LEN);
    smr = ibv_reg_mr(d->pd, src, LEN, T_ACCESS_ALL);
    dmr = ibv_reg_mr(d->pd, dst, 3 * LEN, T_ACCESS_ALL);
    REQUIRE(smr && dmr, "reg_mr");
    slot = dmr->rkey >> 8;
    pair_up(d, &p);
    die_writing(slot, how);
    alarm(20);
    REQUIRE(t_post_send(p.a, IBV_WR_RDMA_WRITE, src, LEN, smr->lkey, (uintptr_t)dst + LEN,
                        dmr->rkey, IBV_SEND_SIGNALED, 1) == 0,
            "post");
    t_expect(p.cq, IBV_WC_REM_ACCESS_ERR, 1, "RDMA WRITE to the dead writer's slot");
    alarm(0);
    for (size_t i = 0; i < 3 * LEN; i++)
        if (dst[i] != 0x11) {
            CHECK(false, "byte %zu of the target changed", i);
            break;
        }
    CHECK(!(sib_fmr_at(&fab, slot)->seq & 1), "the slot's counter is even again");
    CHECK(ibv_dereg_mr(dmr) == 0 && ibv_dereg_mr(smr) == 0, "dereg");
    pair_down(&p);
    free(src);
    free(dst);
}

static void odd_free_slot(struct t_dev *d)
{
    uint8_t *src = t_alloc(LEN), *dst = t_alloc(LEN);
    struct ibv_mr *smr, *dmr, *probe;
    struct pair p;
    uint32_t next;

    printf("an odd counter on the free slot the next registration takes\n");
    memset(src, 0xcd, LEN);
    memset(dst, 0, LEN);
    smr = ibv_reg_mr(d->pd, src, LEN, T_ACCESS_ALL);
    probe = ibv_reg_mr(d->pd, dst, LEN, T_ACCESS_ALL);
    REQUIRE(smr && probe, "reg_mr");
    next = (probe->lkey >> 8) + 1; /* slots are handed out in order */
    CHECK(ibv_dereg_mr(probe) == 0, "dereg");
    REQUIRE(sib_fmr_at(&fab, next)->lkey == 0, "slot %u is free", next);
    die_writing(next, FREE_SLOT);
    dmr = ibv_reg_mr(d->pd, dst, LEN, T_ACCESS_ALL);
    REQUIRE(dmr, "reg_mr over the odd slot");
    if ((dmr->lkey >> 8) != next) {
        t_skip("the registration took another slot");
    } else {
        CHECK(!(sib_fmr_at(&fab, next)->seq & 1), "registration left the counter even");
        pair_up(d, &p);
        alarm(20);
        REQUIRE(t_post_send(p.a, IBV_WR_RDMA_WRITE, src, LEN, smr->lkey, (uintptr_t)dst, dmr->rkey,
                            IBV_SEND_SIGNALED, 2) == 0,
                "post");
        t_expect(p.cq, IBV_WC_SUCCESS, 2, "RDMA WRITE through the re-registered slot");
        alarm(0);
        CHECK(memcmp(src, dst, LEN) == 0, "the bytes arrived");
        pair_down(&p);
    }
    CHECK(ibv_dereg_mr(dmr) == 0 && ibv_dereg_mr(smr) == 0, "dereg");
    free(src);
    free(dst);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_alarm};
    struct t_dev d;

    setvbuf(stdout, NULL, _IOLBF, 0);
    sigaction(SIGALRM, &sa, NULL);
    t_dev_open(&d);
    map_fabric();
    dead_writer(&d, LOCKED, "a writer dies holding the MR lock, the counter odd");
    dead_writer(&d, TORN, "a slot torn without the lock, the counter odd");
    odd_free_slot(&d);
    t_dev_close(&d);
    CHECK(t_fabric_file_gone(), "no fabric file left behind");
    return t_summary();
}
