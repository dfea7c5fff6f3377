/*
 * The data server's polling after work (dataserver/linger.c) over made-up
 * times: it grows to cover the gaps before requests that came soon after
 * work, shrinks after long idle periods, never passes its bound (50 us when
 * the host has no spare core) and, with a bound of 0, never polls at all.
 */
#include <stdbool.h>

#include "dataserver/linger.h"
#include "unit_test.h"

#define US 1e-6

/* From `t`, polls until the linger lets the server sleep: the seconds it polled. */
static double polled_for(struct linger *l, double t)
{
    double start = t;
    while (linger_poll_on(l, t) && t - start < 1)
        t += 0.1 * US;
    return t - start;
}

/* One burst of work at `t`, then idle: how long the server polls afterwards. */
static double after_work(struct linger *l, double t)
{
    linger_work(l, t);
    return polled_for(l, t);
}

int main(void)
{
    struct linger l;
    double t = 1;

    /* Requests every 80 us: the first comes after the server slept (it polled 50 us), then
     * the server polls long enough to catch them awake. */
    linger_init(&l, 100 * US, false);
    double first = after_work(&l, t);
    EXPECT(first > 49 * US && first < 51 * US, "starts at half the bound");
    t += 80 * US; /* the next request: the server fell asleep 30 us before it */
    double grown = after_work(&l, t);
    EXPECT(grown > 99 * US && grown < 101 * US,
           "a request soon after it slept: polls up to the bound (2 x 80 us, bounded)");

    /* Every idle period far longer than the bound: the time halves down to the floor. */
    for (int k = 0; k < 40; k++) {
        t += 10e-3;
        after_work(&l, t);
    }
    t += 10e-3;
    double shrunk = after_work(&l, t);
    EXPECT(shrunk > 0 && shrunk < 5 * US, "long idle periods: polls only a few microseconds");

    /* Then requests 8 us apart again: one late request and it polls 16 us, which catches
     * the next while awake, so it keeps that. */
    t += 8 * US;
    double again = after_work(&l, t);
    EXPECT(again > 15 * US && again < 17 * US, "a late request: 2 x its gap");
    linger_work(&l, t + 8 * US);
    EXPECT(polled_for(&l, t + 8 * US) > 15 * US, "a request caught while polling: kept");

    /* No spare core: at most 50 us, whatever the bound asked for. */
    linger_init(&l, 1000 * US, true);
    t = 2;
    after_work(&l, t);
    t += 40 * US; /* after it slept: it would grow to 80 us */
    double capped = after_work(&l, t);
    EXPECT(capped > 49 * US && capped < 51 * US, "ARMCI_WAIT yield: polls at most 50 us");

    /* A bound of 0: sleeps at once after work. */
    linger_init(&l, 0, false);
    t = 3;
    EXPECT(after_work(&l, t) == 0, "bound 0: never polls");
    t += 1 * US;
    EXPECT(after_work(&l, t) == 0, "bound 0: never polls, even after a request right after");

    printf("linger: ok\n");
    return 0;
}
