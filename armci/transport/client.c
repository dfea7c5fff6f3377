/* Setting up and tearing down the client side of the data path (client.h). */
#include "transport/client.h"

#include "odcm/cm.h"
#include "transport/dgram.h"
#include "transport/entry.h"
#include "transport/numbering.h"
#include "transport/progress.h"
#include "transport/replies.h"
#include "transport/route.h"
#include "transport/requests.h"
#include "transport/send_queue.h"
#include "transport/work.h"
#include "verbs/device.h"
#include "verbs/reg_cache.h"

void client_init(void)
{
    route_init(vdev.kind);
    /* The layers below the progress engine wait through it; it posts what waited for a
     * connection through the connection queue, above it. */
    sq_init(progress_wait);
    request_init(progress_wait);
    progress_init(conns_drain_ready, dgram_client_cq_entries());
    dgram_init();
    bounce_pool_init(progress_wait);
    reg_cache_init(vdev.provider, works_outstanding);
}

void client_cm_env(struct cm_client_env *env)
{
    *env = (struct cm_client_env){.cq = progress_cq(),
                                  .srq = replies_srq(),
                                  .max_inline = 128,
                                  .on_ready = conn_on_ready,
                                  .on_destroy = conn_forget,
                                  .on_insert = conn_insert,
                                  .busy = conn_busy,
                                  .waits_for_lock = conn_waits_for_lock,
                                  .on_broken = conn_on_broken};
}

void client_fini(void)
{
    conns_fini();
    dgram_fini();
    numbering_fini();
    progress_fini();
    bounce_pool_fini();
    reg_cache_fini();
    works_fini();
}
