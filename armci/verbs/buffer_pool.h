/*
 * A registered send-buffer pool: buffers of `size` bytes with a free list,
 * registered in chunks. It starts with `initial` buffers and, when a get
 * finds none free, registers another chunk (doubling it) up to `max`;
 * buffer_pool_trim gives back the chunks nothing needed since its last call.
 * Each endpoint that sends from registered memory of its own uses one: the
 * client's bounce buffers (transport/work.c), the data server's out buffers
 * (dataserver/resources.c), the UD channel's datagrams (odcm/ud.c, fixed).
 *
 * Ownership is explicit: a buffer belongs to the pool while free, to the
 * caller of buffer_pool_get until it calls buffer_pool_release (typically
 * from the send completion). Nobody waits here: get returns NULL when every
 * buffer is taken, and the owner of the pool decides what to do (make
 * progress and try again, as the client does, or let a retransmission timer
 * retry later). Get and release are inline: every operation through a
 * bounce buffer and every server answer takes and gives one back.
 *
 * Not thread safe: each pool is used by one thread (or under its owner's lock).
 */
#ifndef ARMCI_VERBS_BUFFER_POOL_H
#define ARMCI_VERBS_BUFFER_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/memstat.h"

struct buffer_pool;

/* One buffer of a pool. addr, lkey, rkey and index stay fixed for the pool's life. */
struct pool_buffer {
    void *addr;
    uint32_t lkey;
    uint32_t rkey; /* meaningful when the pool was created with remote = true */
    int index;     /* 0 .. count-1: buffer_pool_at(pool, index) == this */
    void *owner;   /* free for the holder's use while it holds the buffer (e.g. its connection) */
    struct buffer_pool *pool;      /* the pool it belongs to (buffer_pool_give_back) */
    struct pool_buffer *next_free; /* the pool's, while the buffer is free */
};

/* Buffers [first, first + n) of a pool: registered together. */
struct pool_chunk {
    char *region;
    struct net_mr *mr;
    int first, n;
};

struct buffer_pool {
    const char *what;  /* names the pool in error messages */
    size_t size;       /* of each buffer */
    int count;         /* buffers registered now */
    int max;           /* what it may grow to */
    int free;          /* buffers on the free list */
    int peak;          /* most in use at once since the last trim */
    double trimmed_at; /* when buffer_pool_trim last looked */
    bool remote;       /* registered for peers' RDMA too */
    struct pool_chunk *chunks;
    int nchunks;
    int records;             /* of all: the max it was created with */
    struct pool_buffer *all; /* the first count are live */
    struct pool_buffer *free_list;
    enum mem_kind kind; /* where memstat counts it; MEM_KINDS: not counted */
};

/*
 * Allocates and registers `initial` buffers of size bytes (remote: peers may
 * also read and write them, for an RDMA target), growing up to `max` on
 * demand. `call` is the ARMCI call named if the first ibv_reg_mr fails (the
 * job dies, as for every registration); a later chunk that cannot be
 * registered only stops the growth.
 */
void buffer_pool_create(struct buffer_pool *p, const char *call, const char *what, int initial,
                        int max, size_t size, bool remote, enum mem_kind kind);
/* Deregisters and frees everything; buffers still held are gone too. A zeroed pool is fine. */
void buffer_pool_destroy(struct buffer_pool *p);

/* Registers the next chunk; its buffers are free. false at max or if it cannot be registered. */
bool buffer_pool_grow(struct buffer_pool *p);

/* A free buffer, now the caller's; NULL when none is free and the pool cannot grow. */
static inline struct pool_buffer *buffer_pool_get(struct buffer_pool *p)
{
    struct pool_buffer *b = p->free_list;
    if (!b) {
        if (!buffer_pool_grow(p))
            return NULL;
        b = p->free_list;
    }
    p->free_list = b->next_free;
    p->free--;
    if (p->count - p->free > p->peak)
        p->peak = p->count - p->free;
    b->next_free = NULL;
    return b;
}

/* Gives b (taken from p) back. */
static inline void buffer_pool_release(struct buffer_pool *p, struct pool_buffer *b)
{
    b->owner = NULL;
    b->next_free = p->free_list;
    p->free_list = b;
    p->free++;
}
/* Gives b back to the pool it was taken from. */
static inline void buffer_pool_give_back(struct pool_buffer *b)
{
    buffer_pool_release(b->pool, b);
}

/* Every buffer is free again (the QP they were posted on was reset: nothing is in flight). */
void buffer_pool_release_all(struct buffer_pool *p);
/*
 * When every buffer is free and a second has passed since the last trim
 * (`now`, in seconds): deregisters the newest chunks that the most buffers
 * in use at once since then did not reach (never the first chunk), and starts
 * counting that peak again. The owner calls it where it is idle; the second
 * keeps a pool used in bursts from being registered over and over.
 */
void buffer_pool_trim(struct buffer_pool *p, double now);

static inline struct pool_buffer *buffer_pool_at(struct buffer_pool *p, int index)
{
    return &p->all[index];
}

#endif
