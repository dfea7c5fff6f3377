/*
 * What the transport counts an operation's completion in: the state behind
 * a user's armci_hdl_t (api/request.c maps handles to these) or the
 * implicit handle of NULL-handle and blocking operations.
 */
#ifndef ARMCI_TRANSPORT_HANDLE_H
#define ARMCI_TRANSPORT_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

struct request {
    int pending;         /* operations still in flight */
    uint32_t generation; /* bumped on every reuse of the slot: stale handles are detected */
    bool in_use;
};

/* The request behind implicit (NULL-handle) and blocking operations. */
struct request *req_implicit(void);

static inline void req_op_started(struct request *r)
{
    r->pending++;
}

static inline void req_op_done(struct request *r)
{
    r->pending--;
}

/* Makes progress until r has nothing pending. */
void req_wait(struct request *r);

#endif
