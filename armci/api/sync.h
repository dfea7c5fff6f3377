/* Fences and barriers. */
#ifndef ARMCI_API_SYNC_H
#define ARMCI_API_SYNC_H

/* Returns when everything this process issued is complete at its targets. */
void sync_all_fence(void);

#endif
