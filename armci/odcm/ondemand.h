/*
 * On-demand connection setup over the UD out-of-band channel (ODCM paper
 * Fig. 3 "serial" and Fig. 4 "overlap"), client side.
 */
#ifndef ARMCI_ODCM_ONDEMAND_H
#define ARMCI_ODCM_ONDEMAND_H

#include "odcm/cm.h"

void ondemand_init(void);
void ondemand_fini(void);
/* Starts connecting to node; the returned connection becomes READY later. */
struct conn *ondemand_start(int node);
void ondemand_progress(void);
double ondemand_next_deadline(void);
/* Datagrams the client UD channel refused. */
long ondemand_refused(void);

#endif
