/*
 * Completion tracking for non-blocking operations. An armci_hdl_t refers to
 * a request (slot index + generation, packed in the handle's two ints); a
 * NULL handle means the implicit request, completed by WaitAll/Fence.
 * Aggregate handles collect any number of operations in one request.
 */
#ifndef ARMCI_REQUEST_H
#define ARMCI_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "armci.h"
#include "transport/handle.h"

/* The request a new operation with handle hdl (may be NULL) is counted in. */
struct request *req_for_handle(const char *call, armci_hdl_t *hdl);

void req_init(void);
void req_fini(void);

int req_handle_wait(const char *call, armci_hdl_t *hdl);
int req_handle_test(const char *call, armci_hdl_t *hdl);
void req_handle_init(armci_hdl_t *hdl);
void req_handle_set_aggregate(armci_hdl_t *hdl, bool aggregate);

#endif
