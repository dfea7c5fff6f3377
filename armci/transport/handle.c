#include "transport/handle.h"

#include "transport/progress.h"

static struct handle implicit_req = {.in_use = true};

struct handle *handle_implicit(void)
{
    return &implicit_req;
}

void handle_wait(struct handle *r)
{
    while (r->pending > 0)
        progress_wait();
}
