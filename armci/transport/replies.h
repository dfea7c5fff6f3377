/* What client.c and progress.c share: completion handlers and in-flight records. */
#ifndef ARMCI_TRANSPORT_REPLIES_H
#define ARMCI_TRANSPORT_REPLIES_H

#include <stdbool.h>
#include <stdint.h>

#include "dataserver/protocol.h"
#include "core/wr_id.h"
#include "transport/client.h"

/* progress.c: completion handlers of the client endpoint (registered by client_init). */
void on_send_completion(void *ctx, const struct ibv_wc *wc);
void on_reply(void *ctx, const struct ibv_wc *wc);

#endif
