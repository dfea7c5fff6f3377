/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-memory fabric file: creation, layout, joining and leaving,
 * and removing the files of dead jobs. Its locks are in lock.c, its heap in
 * heap.c, process liveness in proc.c, reclaiming a context's objects in
 * reclaim.c.
 *
 * Who creates, re-initialises and unlinks the file is decided under an
 * flock() on it: a process that opened a file which was unlinked meanwhile
 * sees st_nlink == 0 and starts over, so the last process out can unlink
 * without racing a newcomer.
 *
 * /dev/shm is shared by every user: the file is created exclusively with
 * mode 0600, never through a symbolic link, and an existing one is used only
 * if it is a regular file of ours that nobody else may open. Whoever can
 * write the file can redirect RDMA into any process of the job.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sib.h"

/* ---- layout ---- */

static uint64_t round_page(uint64_t x)
{
    return (x + 4095) & ~4095ull;
}

static int fabric_init(struct sib_fabric *f)
{
    struct sib_hdr *h = f->hdr;
    uint64_t off = round_page(sizeof(*h));

    /* Give back every page (they read as zero again) without shrinking the
     * file, which could SIGBUS a concurrent reader such as softib-info. */
    if (fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)f->size) &&
        errno != EOPNOTSUPP)
        return errno;
    memset(h, 0, sizeof(*h));
    h->ctx_off = off;
    off = round_page(off + SIB_MAX_CTX * sizeof(struct sib_fctx));
    h->qp_off = off;
    off = round_page(off + SIB_MAX_QP * sizeof(struct sib_fqp));
    h->cq_off = off;
    off = round_page(off + SIB_MAX_CQ * sizeof(struct sib_fcq));
    h->srq_off = off;
    off = round_page(off + SIB_MAX_SRQ * sizeof(struct sib_fsrq));
    h->mr_off = off;
    off = round_page(off + SIB_MAX_MR * sizeof(struct sib_fmr));
    if (off + (1u << 20) > f->size)
        return ENOSPC;
    h->heap_start = h->heap_brk = off;
    h->heap_end = f->size;
    h->size = f->size;
    h->hdr_bytes = sizeof(*h);
    h->version = SIB_VERSION;
    h->roce = sib_knobs.roce;
    h->mtu_enum = (uint32_t)sib_knobs.mtu_enum;
    h->pidns = sib_pidns();
    h->next_lid = 1;
    h->id = sib_rng_seed(0x1d) ^ sib_now_ns();
    sib_lock_init(&h->lock);
    sib_lock_init(&h->atomic_lock);
    sib_lock_init(&h->mr_lock);
    __atomic_store_n(&h->magic, SIB_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

/* Anything else at our name may have been planted: refuse it, naming it. */
static int check_ours(int fd, const char *path, struct stat *st)
{
    if (fstat(fd, st))
        return errno;
    if (!S_ISREG(st->st_mode)) {
        fprintf(stderr, "softib: refusing fabric %s: not a regular file\n", path);
        return EPERM;
    }
    if (st->st_uid != geteuid()) {
        fprintf(stderr, "softib: refusing fabric %s: owned by uid %u, not by uid %u; remove it\n",
                path, (unsigned)st->st_uid, (unsigned)geteuid());
        return EPERM;
    }
    if (st->st_mode & 077) {
        fprintf(stderr,
                "softib: refusing fabric %s: mode %04o lets other users open it (want 0600); "
                "remove it\n",
                path, (unsigned)(st->st_mode & 07777));
        return EACCES;
    }
    return 0;
}

static int open_failed(const char *path, int err)
{
    if (err == ELOOP) {
        fprintf(stderr, "softib: refusing fabric %s: a symbolic link; remove it\n", path);
        return EPERM;
    }
    if (err != ENOENT)
        fprintf(stderr, "softib: cannot open fabric %s: %s\n", path, strerror(err));
    return err;
}

int sib_fabric_map(struct sib_fabric *f, const char *path, bool writable)
{
    struct stat st;
    void *p;
    int rc;

    memset(f, 0, sizeof(*f));
    snprintf(f->path, sizeof(f->path), "%s", path);
    f->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
    if (f->fd < 0)
        return open_failed(path, errno);
    rc = check_ours(f->fd, path, &st);
    if (!rc && st.st_size < (off_t)sizeof(struct sib_hdr))
        rc = EPROTO;
    if (rc) {
        close(f->fd);
        return rc;
    }
    p = mmap(NULL, (size_t)st.st_size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, f->fd,
             0);
    if (p == MAP_FAILED) {
        int err = errno;
        close(f->fd);
        return err;
    }
    f->base = p;
    f->size = (uint64_t)st.st_size;
    f->hdr = p;
    f->pid = getpid();
    if (f->hdr->magic != SIB_MAGIC || f->hdr->version != SIB_VERSION || f->hdr->size != f->size) {
        sib_fabric_unmap(f);
        return EPROTO;
    }
    return 0;
}

void sib_fabric_unmap(struct sib_fabric *f)
{
    if (f->base)
        munmap(f->base, f->size);
    if (f->fd >= 0)
        close(f->fd);
    f->base = NULL;
    f->hdr = NULL;
    f->fd = -1;
}

/*
 * Open the file, creating it if needed, flock()ed and not a stale unlinked
 * one. Created exclusively (O_EXCL: never through a link, never someone
 * else's file); an existing one is opened without following a symbolic
 * link and must pass check_ours before anything is read, locked or sized.
 */
static int open_locked(const char *path, struct stat *st)
{
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        int rc;

        if (fd < 0 && errno == EEXIST)
            fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            continue; /* removed between the two opens */
        if (fd < 0)
            return -open_failed(path, errno);
        rc = check_ours(fd, path, st);
        if (!rc && flock(fd, LOCK_EX))
            rc = errno;
        if (!rc && fstat(fd, st))
            rc = errno;
        if (rc) {
            close(fd);
            return -rc;
        }
        if (st->st_nlink > 0)
            return fd;
        close(fd); /* the last user unlinked it while we waited */
    }
}

/* Remove the name only if it still is the file we have open (flock held). */
static void unlink_ours(const struct sib_fabric *f)
{
    struct stat mine, named;

    if (fstat(f->fd, &mine) || lstat(f->path, &named))
        return;
    if (mine.st_dev == named.st_dev && mine.st_ino == named.st_ino)
        unlink(f->path);
}

static int map_new(struct sib_fabric *f, const char *path)
{
    struct stat st;
    bool fresh;
    void *p;
    int fd = open_locked(path, &st);

    if (fd < 0)
        return -fd;
    fresh = st.st_size == 0;
    if (fresh && ftruncate(fd, (off_t)sib_knobs.fabric_bytes)) {
        int err = errno;
        close(fd);
        return err;
    }
    f->size = fresh ? sib_knobs.fabric_bytes : (uint64_t)st.st_size;
    p = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        close(fd);
        return err;
    }
    snprintf(f->path, sizeof(f->path), "%s", path);
    f->fd = fd;
    f->base = p;
    f->hdr = p;
    f->pid = getpid();
    return 0;
}

/* With the flock held: make the header usable (creating or recycling). */
static int fabric_adopt(struct sib_fabric *f)
{
    struct sib_hdr *h = f->hdr;
    uint32_t live;

    if (h->magic == 0)
        return fabric_init(f);
    if (h->magic != SIB_MAGIC || h->version != SIB_VERSION || h->size != f->size) {
        fprintf(stderr, "softib: %s was made by another softib version; remove it\n", f->path);
        return EPROTO;
    }
    sib_lock(&h->lock);
    live = sib_reclaim(f);
    sib_unlock(&h->lock);
    return live ? 0 : fabric_init(f); /* everyone on it died: start clean */
}

static int check_params(const struct sib_fabric *f)
{
    const struct sib_hdr *h = f->hdr;

    if (sib_knobs.link_layer_set && (uint32_t)sib_knobs.roce != h->roce) {
        fprintf(stderr, "softib: SOFTIB_LINK_LAYER=%s but fabric %s runs %s\n",
                sib_knobs.roce ? "ethernet" : "infiniband", f->path,
                h->roce ? "ethernet" : "infiniband");
        return EINVAL;
    }
    if (sib_knobs.mtu_set && (uint32_t)sib_knobs.mtu_enum != h->mtu_enum) {
        fprintf(stderr, "softib: SOFTIB_MTU=%u but fabric %s runs MTU %u\n",
                sib_mtu_bytes(sib_knobs.mtu_enum), f->path, sib_mtu_bytes((int)h->mtu_enum));
        return EINVAL;
    }
    return 0;
}

static bool lid_taken(const struct sib_fabric *f, uint32_t lid)
{
    for (uint32_t i = 0; i < f->hdr->ctx_used; i++) {
        const struct sib_fctx *c = sib_fctx_at(f, i);

        if (c->in_use && c->lid == lid)
            return true;
    }
    return false;
}

/* Global lock held. Unicast LIDs are 1..0xbfff. */
static uint32_t next_lid(struct sib_fabric *f)
{
    struct sib_hdr *h = f->hdr;

    for (;;) {
        uint32_t lid = h->next_lid;

        h->next_lid = lid >= 0xbfff ? 1 : lid + 1;
        if (!lid_taken(f, lid))
            return lid;
    }
}

static int ctx_alloc(struct sib_fabric *f, uint32_t *slot)
{
    struct sib_hdr *h = f->hdr;
    int rc = ENOSPC;

    sib_lock(&h->lock);
    sib_reclaim(f);
    for (uint32_t i = 0; i < SIB_MAX_CTX; i++) {
        struct sib_fctx *c = sib_fctx_at(f, i);

        if (c->in_use)
            continue;
        memset(&c->cnt, 0, sizeof(c->cnt));
        sib_lock_lazy_init(&c->ev_lock, &c->ev_lock_ready);
        c->ev_head = c->ev_tail = c->ev_lost = 0;
        c->gen++;
        c->pid = getpid();
        c->start_time = sib_pid_start_time(c->pid);
        c->lid = next_lid(f);
        sib_slot_used(&h->ctx_used, i);
        memset(&c->async_addr, 0, sizeof(c->async_addr));
        __atomic_store_n(&c->in_use, 1, __ATOMIC_RELEASE);
        *slot = i;
        rc = 0;
        break;
    }
    sib_unlock(&h->lock);
    return rc;
}

/* With the flock held: true when no live context uses the file. */
static bool fabric_unused(struct sib_fabric *f)
{
    struct sib_hdr *h = f->hdr;
    uint32_t live;

    if (h->magic == 0)
        return true;
    if (h->magic != SIB_MAGIC || h->version != SIB_VERSION || h->size != f->size)
        return false; /* not ours to judge */
    sib_lock(&h->lock);
    live = sib_reclaim(f);
    sib_unlock(&h->lock);
    return live == 0;
}

/* ---- fabrics nobody is on any more ---- */

/* With the flock held: is any context of the file's table alive? Joining
 * and leaving take the flock, so no context can appear meanwhile. A file
 * that is not a whole fabric of this version, or was made in another pid
 * namespace, is not judged (left alone). */
static bool has_live_context(int fd, const struct stat *st, bool *judged)
{
    const struct sib_hdr *h;
    struct sib_fabric f = {.fd = fd, .size = (uint64_t)st->st_size};
    bool live = false;
    void *p;

    *judged = false;
    if (st->st_size == 0) {
        *judged = true; /* its creator died before sizing it */
        return false;
    }
    if (st->st_size < (off_t)sizeof(struct sib_hdr))
        return false;
    p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return false;
    f.base = p;
    f.hdr = p;
    h = f.hdr;
    if (h->magic == 0) {
        *judged = true; /* its creator died before initialising it */
    } else if (h->magic == SIB_MAGIC && h->version == SIB_VERSION && h->size == f.size &&
               h->ctx_off + SIB_MAX_CTX * sizeof(struct sib_fctx) <= f.size &&
               h->pidns == sib_pidns()) { /* its pids mean something here */
        *judged = true;
        for (uint32_t i = 0; i < SIB_MAX_CTX && !live; i++) {
            const struct sib_fctx *c = sib_fctx_at(&f, i);

            live = c->in_use && sib_pid_alive(c->pid, c->start_time);
        }
    }
    munmap(p, (size_t)st->st_size);
    return live;
}

/* Remove path if it is a fabric of ours with nobody alive on it. */
static bool sweep_one(const char *path)
{
    struct stat st, named;
    bool judged, gone = false;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return false;
    /* never wait for a fabric in use: whoever holds the flock is joining or
     * leaving it, and the last one out removes it anyway */
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
        !flock(fd, LOCK_EX | LOCK_NB)) {
        if (!fstat(fd, &st) && st.st_nlink > 0 && !has_live_context(fd, &st, &judged) && judged &&
            !lstat(path, &named) && named.st_dev == st.st_dev && named.st_ino == st.st_ino)
            gone = unlink(path) == 0;
        flock(fd, LOCK_UN);
    }
    close(fd);
    return gone;
}

int sib_fabric_sweep(const char *keep, void (*removed)(const char *path))
{
    char path[512];
    struct dirent *e;
    int n = 0;
    DIR *d = opendir(SIB_FABRIC_DIR);

    if (!d)
        return 0;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, SIB_FABRIC_BASE, strlen(SIB_FABRIC_BASE)))
            continue;
        snprintf(path, sizeof(path), SIB_FABRIC_DIR "%s", e->d_name);
        if (keep && !strcmp(path, keep))
            continue;
        if (sweep_one(path)) {
            n++;
            if (removed)
                removed(path);
        }
    }
    closedir(d);
    return n;
}

int sib_fabric_join(struct sib_fabric *f, const char *path, uint32_t *slot)
{
    struct stat st;
    int rc;

    if (f->refs > 0 && f->pid != getpid())
        f->refs = 0; /* inherited across fork(): the parent's, not ours */
    if (f->refs == 0) {
        /* fabrics of dead jobs (killed without a chance to leave, as by
         * MPI_Abort) are removed by the next process of the user to come */
        sib_fabric_sweep(path, NULL);
        rc = map_new(f, path);
        if (rc)
            return rc;
    } else if (flock(f->fd, LOCK_EX) || fstat(f->fd, &st)) {
        return errno;
    }
    rc = fabric_adopt(f);
    if (!rc)
        rc = check_params(f);
    if (!rc)
        rc = ctx_alloc(f, slot);
    if (rc && f->refs == 0 && fabric_unused(f))
        unlink_ours(f); /* nobody joined: leave nothing behind */
    flock(f->fd, LOCK_UN);
    if (rc) {
        if (f->refs == 0)
            sib_fabric_unmap(f);
        return rc;
    }
    f->refs++;
    return 0;
}

void sib_fabric_leave(struct sib_fabric *f, uint32_t slot)
{
    struct sib_hdr *h = f->hdr;
    bool locked = flock(f->fd, LOCK_EX) == 0;
    uint32_t live;

    sib_lock(&h->lock);
    sib_ctx_release(f, slot);
    live = sib_reclaim(f);
    sib_unlock(&h->lock);
    if (live == 0 && locked)
        unlink_ours(f);
    if (locked)
        flock(f->fd, LOCK_UN);
    if (--f->refs == 0)
        sib_fabric_unmap(f);
}
