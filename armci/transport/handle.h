/*
 * What the transport counts an operation's completion in: the state behind
 * a user's armci_hdl_t (api/user_handles.c maps handles to these) or the
 * implicit handle of NULL-handle and blocking operations.
 */
#ifndef ARMCI_TRANSPORT_HANDLE_H
#define ARMCI_TRANSPORT_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

struct handle {
    int pending;         /* operations still in flight */
    uint32_t generation; /* bumped on every reuse of the slot: stale handles are detected */
    bool in_use;
};

/* The handle behind implicit (NULL-handle) and blocking operations: the process's, or the
 * calling thread's under MPI_THREAD_MULTIPLE. */
struct handle *handle_implicit(void);
/* Finalize: frees the threads' implicit handles. */
void handles_implicit_fini(void);

static inline void handle_op_started(struct handle *r)
{
    r->pending++;
}

static inline void handle_op_done(struct handle *r)
{
    r->pending--;
}

/* Waiting for a handle makes progress: handle_wait is in progress.h. */

#endif
