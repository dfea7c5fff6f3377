/* The data server's adaptive polling after work (linger.h). */
#include "dataserver/linger.h"

/* The floor: a few polls, so that a request already on the wire is caught without a sleep. */
#define FLOOR_SECONDS 2e-6
/* Long idle periods in a row, none ended by a request the polling caught, before the time
 * shrinks: a client that pauses between short bursts keeps the time its bursts need. */
#define SHRINK_AFTER 4

static double min_d(double a, double b)
{
    return a < b ? a : b;
}

static double max_d(double a, double b)
{
    return a > b ? a : b;
}

void linger_init(struct linger *l, double bound_seconds, bool yields)
{
    double bound = bound_seconds > 0 ? bound_seconds : 0;
    if (yields)
        bound = min_d(bound, LINGER_YIELD_BOUND);
    *l = (struct linger){.bound = bound,
                         .floor = min_d(FLOOR_SECONDS, bound),
                         .current = bound / 2,
                         .idle_since = -1};
}

void linger_work(struct linger *l, double now)
{
    if (l->idle_since < 0)
        return; /* still in the same burst of work */
    double gap = now - l->idle_since;
    if (!l->slept || gap < l->bound)
        l->long_idles = 0;
    if (!l->slept)
        l->current = min_d(l->bound, max_d(l->current, 2 * gap));
    else if (gap < l->bound)
        l->current = min_d(l->bound, max_d(l->floor, 2 * gap));
    else if (++l->long_idles >= SHRINK_AFTER)
        l->current = max_d(l->floor, l->current / 2);
    l->idle_since = -1;
    l->slept = false;
}

bool linger_poll_on(struct linger *l, double now)
{
    if (l->idle_since < 0)
        l->idle_since = now;
    if (!l->slept && now - l->idle_since < l->current)
        return true;
    l->slept = true;
    return false;
}
