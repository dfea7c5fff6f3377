/*
 * The data server's polling after work (dataserver/linger.c) over made-up
 * times: it grows to cover the gaps before requests that came soon after
 * work, shrinks after runs of long idle periods but not for pauses between
 * short bursts, never passes its bound (50 us when the host has no spare
 * core) and, with a bound of 0, never polls at all.
 */
#include <stdbool.h>

#include "dataserver/linger.h"
#include "unit_test.h"

#define US 1e-6

static bool last_caught; /* whether the last request came while the server still polled */

/* The server runs out of work at `from` and the next request arrives at `next`: it polls in
 * steps of 0.1 us until then or until the linger lets it sleep, then serves the request.
 * Returns the seconds it polled. */
static double idle_then_request(struct linger *l, double from, double next)
{
    double t = from;
    bool polling = true;
    while (t < next && (polling = linger_poll_on(l, t)))
        t += 0.1 * US;
    last_caught = polling;
    linger_work(l, next);
    return t - from;
}

/* Whether the request ending an idle period of `gap` seconds is caught while polling. */
static bool caught(struct linger *l, double *t, double gap)
{
    idle_then_request(l, *t, *t + gap);
    *t += gap;
    return last_caught;
}

int main(void)
{
    struct linger l;
    double t = 1;

    /* Requests every 80 us: the first after work finds the server asleep (it polled half the
     * bound, 50 us); from then on it polls long enough to catch them. */
    linger_init(&l, 100 * US, false);
    linger_work(&l, t);
    double first = idle_then_request(&l, t, t + 80 * US);
    t += 80 * US;
    EXPECT(first > 49 * US && first < 51 * US, "starts at half the bound");
    EXPECT(caught(&l, &t, 80 * US), "after one request it missed by 30 us, it catches the next");

    /* Idle periods far longer than the bound, one after another: the time halves down to
     * the floor. */
    for (int k = 0; k < 40; k++) {
        idle_then_request(&l, t, t + 10e-3);
        t += 10e-3;
    }
    double shrunk = idle_then_request(&l, t, t + 10e-3);
    t += 10e-3;
    EXPECT(shrunk > 0 && shrunk < 5 * US, "long idle periods: polls only a few microseconds");

    /* Requests 8 us apart again: one is missed, the next ones are caught. */
    EXPECT(!caught(&l, &t, 8 * US), "shrunk: misses one");
    EXPECT(caught(&l, &t, 8 * US), "then catches the next");

    /* A client that sends two lone requests 10 ms apart, then a burst of two 8 us apart,
     * over and over: the pauses do not shrink the time, since the polling catches the
     * second request of every burst. */
    linger_init(&l, 100 * US, false);
    t = 4;
    linger_work(&l, t);
    for (int k = 0; k < 40; k++) {
        for (int lone = 0; lone < 2; lone++)
            caught(&l, &t, 10e-3);
        EXPECT(caught(&l, &t, 8 * US),
               "short bursts after long pauses: the second request is caught");
    }

    /* No spare core: at most 50 us, whatever the bound asked for. */
    linger_init(&l, 1000 * US, true);
    t = 5;
    linger_work(&l, t);
    idle_then_request(&l, t, t + 40 * US); /* missed after 25 us: would grow to 80 us */
    t += 40 * US;
    double capped = idle_then_request(&l, t, t + 60 * US);
    EXPECT(capped > 49 * US && capped < 51 * US, "ARMCI_WAIT yield: polls at most 50 us");
    t += 60 * US;

    /* A bound of 0: sleeps at once after work. */
    linger_init(&l, 0, false);
    t = 6;
    linger_work(&l, t);
    for (int k = 0; k < 3; k++) {
        EXPECT(idle_then_request(&l, t, t + 1 * US) == 0, "bound 0: never polls");
        t += 1 * US;
    }

    printf("linger: ok\n");
    return 0;
}
