/*
 * Work-request ids: either a pointer (8-byte aligned, tag 0) or an index
 * with a tag in the low three bits saying what it indexes. One scheme for
 * every CQ, so a CQ can be shared by several users.
 */
#ifndef ARMCI_CORE_WR_ID_H
#define ARMCI_CORE_WR_ID_H

#include <stdbool.h>
#include <stdint.h>

enum wr_tag {
    WR_TAG_POINTER = 0, /* client in-flight record or server connection */
    WR_TAG_RECV = 1,    /* client reply buffer / server request buffer */
    WR_TAG_UD_RECV = 2,
    WR_TAG_UD_SEND = 3,
    WR_TAG_OUTBUF = 4, /* server packed-get buffer (pointer) */
    WR_TAG_CONN = 5,   /* client connection: a request that retires no work of its own */
    WR_TAG_PULL = 6,   /* server RDMA read of a client's data (pointer to its record) */
    WR_TAG_DGRAM = 7,  /* the UD data path: its sends and its receives complete on different CQs */
};

static inline uint64_t wr_id_make(uint64_t index_or_pointer, enum wr_tag tag)
{
    bool pointer =
        tag == WR_TAG_POINTER || tag == WR_TAG_OUTBUF || tag == WR_TAG_CONN || tag == WR_TAG_PULL;
    return pointer ? index_or_pointer | tag : (index_or_pointer << 3) | tag;
}

static inline enum wr_tag wr_id_tag(uint64_t wr_id)
{
    return (enum wr_tag)(wr_id & 7);
}

static inline uint64_t wr_id_index(uint64_t wr_id)
{
    return wr_id >> 3;
}

static inline void *wr_id_pointer(uint64_t wr_id)
{
    return (void *)(uintptr_t)(wr_id & ~(uint64_t)7);
}

#endif
