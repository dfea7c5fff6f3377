/*
 * Wire format between clients and a node's data server, over the RC
 * connection of each client. All fields are in the sender's byte order:
 * client and server run the same binary on the same kind of host.
 *
 * A request is struct ds_message, then `len` payload bytes for operations
 * that carry data (ACC, PUT_PACKED). One SEND carries one request, or
 * several updates back to back (ds_op_shares_send): each but the last has
 * DS_MORE set and exactly the payload its op and sizes imply
 * (ds_shared_payload), and the next starts at the following 8-byte
 * boundary; the last one's payload is the rest of the SEND. An update whose
 * payload would not fit the server's request buffer is sent alone as its
 * header with DS_PULLED, and the server RDMA-reads the payload the header
 * implies from the client (so request buffers stay small: a few KiB each,
 * however large a piece). A SEND costs
 * the client one credit however many requests it carries. The server answers every
 * request through struct ds_reply SENDs echoing tokens (one reply may answer
 * several requests: see struct ds_reply); for GET_PACKED it first
 * RDMA-writes the packed data to reply_addr/reply_rkey on the client.
 * Replies also return flow-control credits.
 *
 * Addresses are in the data server's address space (the "server address"
 * of segment.h); the server checks every range against the segments it has
 * registered before touching memory, and answers DS_EFAULT otherwise.
 */
#ifndef ARMCI_DATASERVER_PROTOCOL_H
#define ARMCI_DATASERVER_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/stride.h"

enum ds_op {
    DS_ACC = 1,    /* addr/len: accumulate payload (datatype, scale) */
    DS_RMW,        /* addr: Rmw op `rmw_op` with operand `value`; reply.value = old */
    DS_LOCK,       /* addr: ticket lock; the reply is the grant (may be deferred) */
    DS_UNLOCK,     /* addr: release the ticket lock */
    DS_PUT_PACKED, /* payload is packed data, scattered by `stride` from addr */
    DS_GET_PACKED, /* gather by `stride` from addr, RDMA-write packed to reply_addr (at most the
                      out-buffer size, unless the chunks fit one gather list of the QP) */
    DS_ACC_PACKED, /* like PUT_PACKED, but accumulated */
    DS_PUT_IOV,    /* value = k segments of len bytes: k addresses, then k * len data */
    DS_GET_IOV,    /* k addresses; the k * len bytes are RDMA-written to reply_addr */
    DS_ACC_IOV,    /* like PUT_IOV, accumulated */
    DS_PUT_PULL,   /* like PUT_PACKED, but the packed data stays with the client, at
                      reply_addr/reply_rkey: the server RDMA-reads it into place (at most a
                      gather list of chunks) and answers when it is there */
    DS_OP_MAX
};

/* A client has at most this many requests awaiting answers, over all its connections (its reply
 * buffers): a server keeps the answers a replay must find for as many. */
#define DS_MAX_UNANSWERED 256

/*
 * Whether op is an update: a put or accumulate the data server applies to
 * target memory, answered in order (a client waits for its updates to be
 * answered before an RDMA to the same node may overtake them). Rmw and
 * locks are not: their caller waits for their answer anyway.
 */
static inline bool ds_op_is_update(int op)
{
    switch (op) {
    case DS_ACC:
    case DS_PUT_PACKED:
    case DS_ACC_PACKED:
    case DS_PUT_IOV:
    case DS_ACC_IOV:
    case DS_PUT_PULL:
        return true;
    default:
        return false;
    }
}

/*
 * Whether requests of op may share a SEND with others: updates answered in
 * batches, whose payload their header implies. A shared SEND costs the
 * server one receive and the client one credit for all of them.
 */
static inline bool ds_op_shares_send(int op)
{
    return ds_op_is_update(op) && op != DS_PUT_PULL;
}

/* ds_message.flags */
enum ds_flags {
    DS_MORE = 1,   /* another request follows this one in its SEND */
    DS_PULLED = 2, /* the payload stays with the client at reply_addr/reply_rkey, where the server
                      RDMA-reads it before serving the request (ds_pulled_payload): payloads past
                      a request buffer, which stays small; the SEND is the header alone */
};

enum ds_status {
    DS_OK = 0,
    DS_EFAULT = 1, /* range outside every registered segment */
    DS_EINVAL = 2, /* malformed request */
    DS_EPERM = 3,  /* not allowed: an unlock of a mutex the sender does not hold */
    DS_QUEUED = 4, /* a lock reply that is no grant: the request waits in the mutex's queue, its
                      credit comes back now, the grant (or refusal) follows without one */
};

/* What a refusal means, for the client's error message. */
static inline const char *ds_status_name(int status)
{
    switch (status) {
    case DS_EFAULT:
        return "the address range is not inside any ARMCI segment of that node";
    case DS_EINVAL:
        return "malformed request";
    case DS_EPERM:
        return "the mutex is not held by this process";
    default:
        return "unknown status";
    }
}

/* A strided layout at the server: the server-side strides of a packed transfer. */
struct ds_stride {
    int32_t levels;
    int32_t count[ARMCI_MAX_STRIDE_LEVEL + 1];
    int32_t stride[ARMCI_MAX_STRIDE_LEVEL];
};

struct ds_message {
    uint8_t op;          /* enum ds_op */
    uint8_t datatype;    /* ARMCI_ACC_* for ACC / ACC_PACKED */
    uint8_t rmw_op;      /* ARMCI_FETCH_AND_ADD... for RMW */
    uint8_t flags;       /* DS_MORE, DS_PULLED */
    int32_t origin;      /* client's rank (diagnostics, lock ownership) */
    uint64_t token;      /* echoed in the reply */
    uint64_t seq;        /* the client's request number at this server (dataserver/engine.h): one more
                            per request, across its connections to this node, so that a request
                            replayed after a broken connection is recognised */
    uint64_t addr;       /* target address in the server's space */
    uint64_t len;        /* payload / target bytes */
    int64_t value;       /* RMW operand */
    uint8_t scale[16];   /* ACC scale: one element of datatype (up to double complex) */
    uint64_t reply_addr; /* GET_PACKED: where the client wants the packed data; PUT_PULL:
                            where the client has it */
    uint32_t reply_rkey;
    int32_t target_local;    /* node-local index of the process whose memory is targeted */
    struct ds_stride stride; /* *_PACKED only */
};

/*
 * The payload of a request that shares its SEND (DS_MORE) or is pulled: what its op and
 * sizes imply. False if rq cannot share a SEND or the size does not fit a
 * size_t (checked, so that a hostile header cannot wrap it).
 */
static inline bool ds_shared_payload(const struct ds_message *rq, size_t *payload)
{
    uint64_t per;
    switch (rq->op) {
    case DS_ACC:
    case DS_PUT_PACKED:
    case DS_ACC_PACKED:
        return !__builtin_add_overflow(rq->len, 0, payload);
    case DS_PUT_IOV:
    case DS_ACC_IOV: /* value segments: an address and len bytes each */
        if (rq->value <= 0 || __builtin_add_overflow(rq->len, sizeof(uint64_t), &per))
            return false;
        return !__builtin_mul_overflow((uint64_t)rq->value, per, payload);
    default:
        return false;
    }
}

/* How far the request after one with `payload` bytes starts in a shared SEND: at the next
 * multiple of 8 bytes past it. */
static inline size_t ds_shared_step(size_t payload)
{
    return (sizeof(struct ds_message) + payload + 7) & ~(size_t)7;
}

/*
 * One reply answers one or more requests. The server serves a connection's
 * requests in order and answers them in order, except lock requests (a
 * grant may wait for an unlock): `answers` requests of the connection's
 * in-order stream end with the one `token` names, all succeeded but that
 * last one, whose status and value are here. Successful updates (ACC,
 * *_PACKED puts, *_IOV puts/accs) are answered in batches that way; answers
 * == 0 answers the lock request `token` alone.
 *
 * A lock request that has to wait is answered twice: at once with status
 * DS_QUEUED, which returns its credit, and with the grant when its turn
 * comes, which returns none. A waiting lock thus holds no credit, so the
 * holder's unlock, and what it sends before that, always get one.
 */
struct ds_reply {
    uint64_t token;
    int64_t value;    /* RMW: the old value */
    int32_t status;   /* enum ds_status, of the request `token` names */
    int32_t credits;  /* request credits returned to the client */
    uint32_t answers; /* in-order requests answered, the last being `token`; 0: a lock's */
    uint32_t pad;
};

#endif
