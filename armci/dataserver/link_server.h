/* The data server's end of the local link (link.c; link.h is every process's end). */
#ifndef ARMCI_DATASERVER_LINK_SERVER_H
#define ARMCI_DATASERVER_LINK_SERVER_H

#include <poll.h>

/* Listens on the node's socket; a STOP from the master calls on_stop. */
void link_listen(void (*on_stop)(void));
void link_close(void);
/* The link's descriptors to poll (all of them; valid until the next link_handle). */
struct pollfd *link_pollfds(int *n);
/* Handles readiness on the descriptors link_pollfds added. */
void link_handle(const struct pollfd *fds, int n);

#endif
