/* Client reply buffers and in-flight records, shared by client.c and progress.c. */
#ifndef ARMCI_CLIENT_REPLIES_H
#define ARMCI_CLIENT_REPLIES_H

#include <stdbool.h>
#include <stdint.h>

#include "../dataserver/protocol.h"
#include "../wr_id.h"
#include "client.h"

static inline uint64_t reply_wr_id(int index)
{
    return wr_id_make((uint64_t)index, WR_TAG_RECV);
}

void reply_buffer_post(int index);
const struct ds_reply *reply_buffer(int index);
void inflight_release(struct inflight *f);

#endif
