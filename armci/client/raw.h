/*
 * Test access to the data-server protocol: send a hand-made request and
 * get the server's status back, bypassing the client-side argument checks,
 * to prove the server validates on its own. Not used by the runtime.
 */
#ifndef ARMCI_CLIENT_RAW_H
#define ARMCI_CLIENT_RAW_H

#include <stddef.h>

#include "../dataserver/protocol.h"
#include "../segment.h"

/* Sends *rq (token filled in here) with `payload` bytes after it to t's node; returns the
 * reply's enum ds_status. Needs ARMCI_TEST_HOOKS bit 0, or a rejection ends the job. */
int remote_raw_request(const struct target *t, const struct ds_request *rq, const void *payload,
                       size_t payload_len, int64_t *value);

/* Requests the data servers rejected so far (counted with ARMCI_TEST_HOOKS bit 0). */
extern long client_server_errors;

#endif
