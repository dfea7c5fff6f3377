/*
 * Connection statistics and the report printed by rank 0 at ARMCI_Finalize
 * (ARMCI_CONN_REPORT=0 silences it): connections per client and per data
 * server (min/avg/max, as in the ODCM paper's Tables I-IV), the memory they
 * hold against what static mode would hold for the same job, setup latency
 * and retransmissions, plus one machine-readable line.
 *
 * Memory model (per RC QP, what a verbs provider allocates for it):
 *   REPORT_QP_BASE bytes of QP context and doorbell record
 *   + send-queue depth x REPORT_SEND_WQE bytes
 *   (+ receive-queue depth x REPORT_RECV_WQE, but ARMCI QPs receive from SRQs).
 */
#ifndef ARMCI_ODCM_REPORT_H
#define ARMCI_ODCM_REPORT_H

#include "core/intmap.h"
#include "odcm/cm_types.h"

#define REPORT_QP_BASE  1024
#define REPORT_SEND_WQE 64
#define REPORT_RECV_WQE 32

void report_init(void);
void report_setup_done(const struct conn *c);
void report_retransmission(void);
long report_retransmission_count(void);

/* Collective over the job: gathers the statistics of the connections this process holds
 * (node -> struct conn) and of its cap, and prints the report on rank 0. */
void report_connections(const struct intmap *conns, struct cm_stats cap_stats);

#endif
