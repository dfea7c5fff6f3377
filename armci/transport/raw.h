/*
 * Test access to the data-server protocol: send a hand-made request and
 * get the server's status back, bypassing the client-side argument checks,
 * to prove the server validates on its own. Not part of the library: built
 * into a static library the tests link (armci/meson.build).
 */
#ifndef ARMCI_TRANSPORT_RAW_H
#define ARMCI_TRANSPORT_RAW_H

#include <stddef.h>

#include "wire/protocol.h"
#include "transport/target.h"

/* Sends *msg (token filled in here) with `payload` bytes after it to t's node; returns the
 * reply's enum ds_status (a rejection is returned, not fatal). */
int remote_raw_message(const struct target *t, const struct ds_message *msg, const void *payload,
                       size_t payload_len, int64_t *value);

#endif
