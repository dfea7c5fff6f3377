/* Hand-made data-server requests for the tests (raw.h); not in libarmci. */
#include "transport/raw.h"

#include <string.h>

#include "transport/handle.h"
#include "core/threads.h"
#include "transport/progress.h"
#include "transport/requests.h"
#include "transport/entry.h"

/* The payload, copied behind the header. */
struct raw_payload {
    const void *bytes;
    size_t len;
};

static void fill_raw(void *to, const void *ctx)
{
    const struct raw_payload *p = ctx;
    if (p->len)
        memcpy(to, p->bytes, p->len);
}

int remote_raw_message(const struct target *t, const struct ds_message *proto, const void *payload,
                       size_t payload_len, int64_t *value)
{
    rt_lock();
    struct conn *c = conn_get(t->node);
    struct handle done = {0};
    int64_t result = 0;
    int32_t status = 0;
    struct raw_payload p = {payload, payload_len};
    struct request_desc r = {.msg = *proto,
                             .t = t,
                             .verbatim = true,
                             .payload = payload_len,
                             .fill = fill_raw,
                             .fill_ctx = &p,
                             .req = &done,
                             .result = &result,
                             .status = &status,
                             .what = "raw request"};
    request_post(c, &r);
    handle_wait(&done);
    conn_unpin(c);
    rt_unlock();
    if (value)
        *value = result;
    return status;
}
