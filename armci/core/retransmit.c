/* The rules of the runtime's retransmission timers (retransmit.h). */
#include "core/retransmit.h"

#include "core/util.h"

bool retransmit_was_away(double deadline, double now)
{
    return now - deadline > TIMER_AWAY_SECONDS;
}

bool retransmit_may_sample(int sends, double last_progress, double now)
{
    return sends == 1 && now - last_progress < TIMER_AWAY_SECONDS;
}

double retransmit_limit(double cap, double timeout, double floor)
{
    return MAX(floor, MIN(MIN(cap, RETRANSMIT_CEILING), timeout / 4));
}

double retransmit_backoff(double rto, double cap, double timeout, double floor)
{
    return MIN(2 * rto, retransmit_limit(cap, timeout, floor));
}
