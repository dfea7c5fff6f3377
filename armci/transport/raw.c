/* Hand-made data-server requests for the tests (raw.h); not in libarmci. */
#include "transport/raw.h"

#include <string.h>

#include "transport/handle.h"
#include "core/threads.h"
#include "transport/client.h"
#include "transport/conn_queue.h"

int remote_raw_message(const struct target *t, const struct ds_message *proto, const void *payload,
                       size_t payload_len, int64_t *value)
{
    rt_lock();
    struct conn *c = conn_get(t->node);
    struct bounce *b;
    struct ds_message *rq = message_begin(c, (enum ds_op)proto->op, t, 0, proto->len, &b);
    *rq = *proto;
    if (payload_len)
        memcpy(rq + 1, payload, payload_len);
    struct handle done = {0};
    int64_t result = 0;
    int32_t status = 0;
    struct work *f = work_new(WORK_MESSAGE, c, &done);
    f->result = &result;
    f->status = &status;
    message_send(c, rq, b, payload_len, f, "raw request");
    handle_wait(&done);
    conn_unpin(c);
    rt_unlock();
    if (value)
        *value = result;
    return status;
}
