/*
 * The connection manager inside the data server: on-demand connection
 * messages arrive on the server's UD endpoint, whose completions share the
 * server's CQs, and are handled by the server thread.
 */
#ifndef ARMCI_ODCM_CM_SERVER_H
#define ARMCI_ODCM_CM_SERVER_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "verbs/device.h"
#include "verbs/endpoint.h"

/* Entries the CM needs on the server's receive and send CQs. */
int cm_server_recv_cq_entries(void);
int cm_server_send_cq_entries(void);

/* Send-queue entries of the server end of a connection (the data server sizes its QPs so, the
 * connection report models their memory so). */
int cm_server_send_depth(void);

/*
 * What the connection manager needs from the data server to make the server
 * end of a connection; the data server owns that object (`conn`).
 */

/* What a data server tells a client when their connection is made. */
struct cm_terms {
    int credits;     /* requests the client may have outstanding at first */
    int gather;      /* chunks the server writes back in one RDMA write (its QP's gather list) */
    uint64_t resume; /* the client's requests below this number were served (dataserver/engine.h) */
};

struct cm_server_ops {
    /* Creates the server end of a connection from `client`, its QP in INIT. */
    void *(*create)(int client);
    /* Moves it to RTR and RTS towards the client's QP. */
    void (*connect)(void *conn, const struct verbs_addr *client);
    /* Its address to give the client, and the terms the client starts with. */
    struct verbs_addr (*address)(const void *conn, struct cm_terms *terms);
    /* Destroys it: the client has closed its end, with nothing in flight. */
    void (*destroy)(void *conn);
    /* The client's end broke and it connects anew: a new end (QP in INIT) takes over what the
     * old one carried for it (its sequence space, its queued lock requests), the old one goes. */
    void *(*replace)(void *conn);
    /* When it last served a request (any increasing clock): the least recently used one is
     * asked to close when the server is at its cap. */
    uint64_t (*last_active)(const void *conn);
};

/* UD sends complete on `sends`, receives on `requests` (the server's endpoints). */
void cm_server_init(struct endpoint *sends, struct endpoint *requests,
                    const struct cm_server_ops *ops);
void cm_server_fini(void);
uint32_t cm_server_ud_qpn(void);

/* Static mode: the server end for `client`, connected at once; returns its address. */
struct verbs_addr cm_server_accept_static(int client, const struct verbs_addr *client_addr,
                                          struct cm_terms *terms);

/* The server's end of client's connection broke (a send failed): the client is told to set it
 * up anew (recovery; a lost datagram leaves it to find out by its own requests failing). */
void cm_server_tell_broken(int client);

/* While idle: resets the UD channel's QP if the device left it in the error state
 * unannounced (ud_check). */
void cm_server_check_channel(void);

/* Connections accepted by this server (for the report). */
int cm_server_conn_count(void);
/* Since init: most connections held at once, closed by clients, and asked to close. */
struct cm_server_stats {
    long peak;
    long closed;
    long asked;
};
struct cm_server_stats cm_server_stats(void);
/* Datagrams the server's UD channel refused as malformed or forged (any thread; tests). */
long cm_server_refused_datagrams(void);
/* Times the server's UD channel QP was reset after a failure (any thread; tests). */
long cm_server_ud_restarts(void);

#endif
