/*
 * The user's handles: completion tracking for non-blocking operations. An armci_hdl_t refers to
 * a handle state (slot index + generation, packed in the handle's two ints); a
 * NULL handle means the implicit handle, completed by WaitAll/Fence.
 * Aggregate handles collect any number of operations in one handle state.
 */
#ifndef ARMCI_API_USER_HANDLES_H
#define ARMCI_API_USER_HANDLES_H

#include <stdbool.h>
#include <stdint.h>

#include "armci.h"
#include "transport/handle.h"

/* The handle state a new operation with the user's handle hdl is counted in. */
struct handle *handle_of_user(const char *call, armci_hdl_t *hdl);

/* The handle state a new operation with handle hdl is counted in: a blocking call
 * (hdl NULL) counts in the thread's implicit handle without a look at the table. */
static inline struct handle *handle_for(const char *call, armci_hdl_t *hdl)
{
    return hdl ? handle_of_user(call, hdl) : handle_implicit();
}

void handles_init(void);
void handles_fini(void);

int hdl_wait(const char *call, armci_hdl_t *hdl);
int hdl_test(const char *call, armci_hdl_t *hdl);
void hdl_init(armci_hdl_t *hdl);
void hdl_set_aggregate(armci_hdl_t *hdl, bool aggregate);

#endif
