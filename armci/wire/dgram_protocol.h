/*
 * Wire format of the hybrid UD data path between a client and a node's
 * data server (the MVAPICH-Aptus design: small operations to a node without
 * a ready RC connection go as datagrams). Fields are in the sender's byte
 * order, as on RC (protocol.h).
 *
 * A client numbers its requests to one data server 0, 1, 2, ... (32 bits,
 * wrapping) and keeps at most ARMCI_HYBRID_WINDOW of them unanswered. A
 * datagram carries one or more requests of consecutive numbers. The server
 * executes number `expected` and no other, so every request is executed
 * exactly once and in order: an older number is answered again from its
 * cache of the last window's answers (a get is read again instead: it is
 * idempotent and its data is not kept), a newer one is dropped. Only the
 * client retransmits; each answer names its request's number, and a
 * datagram of answers also says up to where the server has executed.
 *
 * Who sent a datagram is what the device says (source QP, LID or GID),
 * checked against the directory for the rank the header names: a forged
 * rank is refused. Every range is checked against the server's registry
 * as on RC.
 */
#ifndef ARMCI_DATASERVER_DGRAM_PROTOCOL_H
#define ARMCI_DATASERVER_DGRAM_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DGRAM_MAGIC 0x4447u /* "DG" */

enum dgram_kind {
    DGRAM_REQUESTS = 1, /* client -> server */
    DGRAM_ANSWERS = 2,  /* server -> client */
};

/*
 * Any other op, 5 and 6 included, is executed as a refusal: it takes its number and is
 * answered DS_EINVAL. 5 and 6 were lock and unlock; locks go over RC only (transport/remote.c),
 * and the numbers stay reserved so that the ops' values never change.
 */
enum dgram_op {
    DGRAM_PUT = 1,        /* len payload bytes to addr */
    DGRAM_GET = 2,        /* len bytes from addr, returned in the answer */
    DGRAM_ACC = 3,        /* accumulate len payload bytes (datatype, scale) at addr */
    DGRAM_RMW = 4,        /* rmw_op with operand value at addr; the answer's value is the old one */
    DGRAM_RESERVED_5 = 5, /* once lock: refused */
    DGRAM_RESERVED_6 = 6, /* once unlock: refused */
    DGRAM_OP_MAX = 7
};

struct dgram_header {
    uint16_t magic; /* DGRAM_MAGIC */
    uint8_t kind;   /* enum dgram_kind */
    uint8_t count;  /* requests or answers that follow */
    int32_t rank;   /* requests: the client's rank; answers: the server's node */
    uint32_t ack;   /* requests: the client's oldest unanswered number; answers: the number the
                       server executes next (everything before it was executed) */
    uint32_t pad;
};

/* One request, then its payload (PUT, ACC: len bytes), the next at an 8-byte boundary. */
struct dgram_request {
    uint32_t seq;
    uint8_t op; /* enum dgram_op */
    uint8_t datatype;
    uint8_t rmw_op;
    uint8_t pad;
    uint32_t len;
    int32_t target_local; /* node-local index of the process whose memory is targeted */
    uint64_t addr;        /* in the server's address space */
    int64_t value;        /* RMW operand */
    uint8_t scale[16];    /* ACC: one element of datatype */
};

/* One answer, then its data (GET: len bytes), the next at an 8-byte boundary. */
struct dgram_answer {
    uint32_t seq;
    int32_t status; /* enum ds_status */
    int64_t value;  /* RMW: the old value */
    uint32_t len;   /* data bytes that follow */
    uint32_t pad;
};

/* Reads the header of a received datagram that should be of `kind` into *h: NULL, or why
 * the datagram is refused. */
static inline const char *dgram_read_header(const void *bytes, size_t len, int kind,
                                            struct dgram_header *h)
{
    if (len < sizeof(*h))
        return "shorter than a data header";
    memcpy(h, bytes, sizeof(*h));
    if (h->magic != DGRAM_MAGIC || h->kind != kind || h->count == 0)
        return kind == DGRAM_REQUESTS ? "not a datagram of requests" : "not a datagram of answers";
    return NULL;
}

/* Bytes of one data datagram: ARMCI_HYBRID_SIZE cut to the port's active MTU (an enum ibv_mtu:
 * IBV_MTU_256 is 1, each step doubles). Both ends compute it alike. */
static inline size_t dgram_size(size_t configured, int mtu)
{
    size_t bytes = (size_t)128 << mtu;
    return configured < bytes ? configured : bytes;
}

/* The bytes a request or answer with `payload` bytes behind it takes in its datagram. */
static inline size_t dgram_step(size_t head, size_t payload)
{
    return (head + payload + 7) & ~(size_t)7;
}

/* Whether a request of op carries its len bytes (a put's or accumulate's data). */
static inline int dgram_op_carries(int op)
{
    return op == DGRAM_PUT || op == DGRAM_ACC;
}

#endif
