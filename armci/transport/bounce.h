/*
 * The client's bounce buffers: cfg.bounce_count registered buffers of
 * cfg.bounce_size bytes, for data copied on its way out (packed puts,
 * request messages) or on its way in (packed gets). Taking one never waits
 * here: post.h's bounce_wait makes progress until one is free.
 */
#ifndef ARMCI_TRANSPORT_BOUNCE_H
#define ARMCI_TRANSPORT_BOUNCE_H

#include <stdint.h>

struct bounce {
    void *buf;
    uint32_t lkey;
    uint32_t rkey; /* the data server RDMA-writes packed get data straight into one */
    struct bounce *next;
};

void bounce_pool_init(void);
void bounce_pool_fini(void);

/* A free buffer, or NULL when all are in use. */
struct bounce *bounce_try_get(void);
void bounce_free(struct bounce *b);

#endif
