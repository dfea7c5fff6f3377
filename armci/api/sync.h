/* Fences and barriers. */
#ifndef ARMCI_SYNC_H
#define ARMCI_SYNC_H

/* Returns when everything this process issued is complete at its targets. */
void sync_all_fence(void);

#endif
