/*
 * The rules every retransmission timer of the runtime follows (the
 * connection manager's setup messages, odcm/ondemand.c; the UD data path's
 * requests, transport/dgram.c). Only the client retransmits; these decide
 * when, and when silence means a peer is gone.
 *
 *  - Late timers: a timer that fires more than TIMER_AWAY_SECONDS after its
 *    deadline means no thread drove progress meanwhile (the process
 *    computed, or sat in MPI): the silence before it is not the peer's, and
 *    a timeout counts anew from then (retransmit_was_away). A round trip
 *    measured across such an absence is no sample either
 *    (retransmit_may_sample; Karn: only from something sent once).
 *  - Back-off: each retransmission doubles the timeout, up to `cap`, and
 *    never past a quarter of the timeout that declares the peer lost nor
 *    past RETRANSMIT_CEILING, so that a lost message is always sent again
 *    several times before that timeout (retransmit_backoff).
 */
#ifndef ARMCI_CORE_RETRANSMIT_H
#define ARMCI_CORE_RETRANSMIT_H

#include <stdbool.h>

/* No timeout grows past this, whatever the smoothed round trip says. */
#define RETRANSMIT_CEILING 1.0

/* Whether a timer due at `deadline` that fires at `now` fired late: then the silence that
 * declares a peer lost starts again at `now`. */
bool retransmit_was_away(double deadline, double now);
/* Whether a round trip that ended at `now` may be a sample: sent once, and progress ran at
 * `last_progress` recently enough that the wait was the peer's, not our absence. */
bool retransmit_may_sample(int sends, double last_progress, double now);
/* The largest timeout: `cap`, at most RETRANSMIT_CEILING and a quarter of `timeout` (the silence
 * that declares the peer lost), and never below `floor` (the configured first timeout). */
double retransmit_limit(double cap, double timeout, double floor);
/* The timeout after a retransmission: `rto` doubled, within retransmit_limit. */
double retransmit_backoff(double rto, double cap, double timeout, double floor);

#endif
