/*
 * The request engine's server side (DESIGN.md 10.1): one sequence space per
 * client, whichever carrier brings its requests. A client numbers every
 * data-server request to this node 0, 1, 2, ... (struct ds_message.seq over
 * RC, the low 32 bits in struct dgram_request.seq over UD: engine_widen), in
 * one counter that outlives its connections and its datagram windows
 * (transport/numbering.h). The server executes only the next number; an
 * older one is a duplicate, answered again and never applied twice:
 *  - from the kept answer, where one was kept: every request that came as a
 *    datagram (a datagram window's worth), and over RC an Rmw, an unlock or a
 *    refusal;
 *  - otherwise by its kind: a get is read again, an update that was not
 *    refused succeeded, a lock answers from its state (locks.h).
 * A newer number waits for the client to send it again after the ones before
 * it (over UD), or follows a request a failing connection left unserved (over
 * RC: the client's replay brings both). Data server thread only.
 */
#ifndef ARMCI_DATASERVER_ENGINE_H
#define ARMCI_DATASERVER_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

struct engine_client;

/* The sequence space of `client` (begun at 0 if it has none). */
struct engine_client *engine_of(int client);
void engine_fini(void);

enum engine_verdict {
    ENGINE_NEW,       /* the next number: execute it (then engine_served) */
    ENGINE_DUPLICATE, /* executed already: answer it again, apply nothing */
    ENGINE_EARLY,     /* beyond the next: the ones before it have not come (yet) */
};
enum engine_verdict engine_check(const struct engine_client *e, uint64_t seq);
/* Request `seq` (ENGINE_NEW) was executed. */
void engine_served(struct engine_client *e, uint64_t seq);
/* Whether this is the first time the client is seen over UD (the server's UD receive
 * buffers grow with such clients); true once per client. */
bool engine_first_datagram(struct engine_client *e);
/* The client's next number: everything below it was executed. */
uint64_t engine_next(const struct engine_client *e);
/* The full number of a datagram's 32-bit one, the one nearest the next number: false if that
 * would be before the first number (nothing the client can still wait for). */
bool engine_widen(const struct engine_client *e, uint32_t seq, uint64_t *full);

/* A datagram of the client says it has the answers of its numbers below `ack` (the low 32
 * bits): those are not kept for it any longer. */
void engine_acked(struct engine_client *e, uint32_t ack);

/* Keeps the answer (status, value) of request `seq`, which came `by_datagram` or over RC, for
 * a duplicate (a get is read again, by whichever carrier: the duplicate names what it asks
 * for). The ring of kept answers grows with the numbers the client may still send again. */
void engine_keep(struct engine_client *e, uint64_t seq, int status, int64_t value,
                 bool by_datagram);
/* The kept answer of request `seq`: false if none was kept or the client can no longer ask
 * for it: over RC beyond the last max(DS_MAX_UNANSWERED, ARMCI_HYBRID_WINDOW) numbers, as a
 * datagram beyond its window or below its ack. */
bool engine_kept(const struct engine_client *e, uint64_t seq, int *status, int64_t *value);

/* For the connection report: a duplicate answered again; a request left for the replay. */
void engine_count_duplicate(void);
void engine_count_unserved(void);

#endif
