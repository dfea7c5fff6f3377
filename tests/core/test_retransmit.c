/*
 * The rules of the runtime's retransmission timers (core/retransmit.h), the
 * one module the connection manager and the UD data path both use: a late
 * timer restarts the silence, only a prompt single send is an RTT sample, and
 * the back-off doubles within a ceiling that leaves several retransmissions
 * before the timeout that declares a peer lost.
 */
#include <stdio.h>

#include "core/retransmit.h"
#include "core/util.h"
#include "unit_test.h"

int main(void)
{
    EXPECT(!retransmit_was_away(10.0, 10.1), "a timer 0.1 s late is not away");
    EXPECT(retransmit_was_away(10.0, 10.0 + TIMER_AWAY_SECONDS + 0.01),
           "a timer past TIMER_AWAY_SECONDS late means we were away");
    EXPECT(retransmit_may_sample(1, 5.0, 5.1), "a prompt single send is a sample");
    EXPECT(!retransmit_may_sample(2, 5.0, 5.1), "Karn: a retransmitted request is no sample");
    EXPECT(!retransmit_may_sample(1, 5.0, 6.0), "an answer taken after a time away is none");

    /* The ceiling: the cap, at most 1 s and a quarter of the timeout, never below the floor. */
    EXPECT(retransmit_limit(1.0, 3.0, 0.002) == 0.75, "a 3 s timeout caps at 0.75 s");
    EXPECT(retransmit_limit(1.0, 60.0, 0.002) == RETRANSMIT_CEILING, "at most the ceiling");
    EXPECT(retransmit_limit(0.1, 60.0, 0.002) == 0.1, "the caller's cap");
    EXPECT(retransmit_limit(0.1, 0.004, 0.002) == 0.002, "never below the first timeout");

    /* Back-off from 2 ms under a 3 s timeout: at least 4 sends before the timeout. */
    double rto = 0.002, t = 0;
    int sends = 1;
    while (t + rto < 3.0) {
        t += rto;
        sends++;
        rto = retransmit_backoff(rto, RETRANSMIT_CEILING, 3.0, 0.002);
        EXPECT(rto <= 0.75, "the back-off stays within a quarter of the timeout");
    }
    EXPECT(sends >= 8, "a lost request is sent again several times before the timeout");
    printf("PASS retransmit rules (%d sends in 3 s)\n", sends);
    return 0;
}
