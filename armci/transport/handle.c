#include "transport/handle.h"

#include "transport/progress.h"

static struct request implicit_req = {.in_use = true};

struct request *req_implicit(void)
{
    return &implicit_req;
}

void req_wait(struct request *r)
{
    while (r->pending > 0)
        progress_wait();
}
