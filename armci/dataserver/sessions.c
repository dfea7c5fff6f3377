/* Clients' sessions: request numbers and kept answers (sessions.h). */
#include "dataserver/sessions.h"

#include <stdlib.h>

#include "core/intmap.h"
#include "core/memstat.h"
#include "core/recovery_stats.h"
#include "core/util.h"
#include "wire/protocol.h"

struct kept_answer {
    uint64_t seq; /* 0: empty */
    int64_t value;
    int32_t status;
};

struct session {
    int client;
    uint64_t next_seq; /* its requests below this number were served */
    /* Answers by seq % DS_MAX_UNANSWERED: in-order requests are answered in order, so the ones
     * a client still waits for span fewer numbers than that (locks are kept by locks.c). */
    struct kept_answer *kept;
};

static struct intmap by_client; /* rank -> struct session */

struct session *session_of(int client)
{
    struct session *s = intmap_get(&by_client, (uint32_t)client);
    if (s)
        return s;
    s = xcalloc(1, sizeof(*s));
    memstat_add(MEM_CONNECTIONS, (long)sizeof(*s));
    *s = (struct session){.client = client, .next_seq = 1};
    intmap_put(&by_client, (uint32_t)client, s);
    return s;
}

static void session_free(struct session *s)
{
    if (s->kept)
        memstat_add(MEM_CONNECTIONS, -(long)(sizeof(*s->kept) * DS_MAX_UNANSWERED));
    memstat_add(MEM_CONNECTIONS, -(long)sizeof(*s));
    free(s->kept);
    free(s);
}

void session_end(int client)
{
    struct session *s = intmap_get(&by_client, (uint32_t)client);
    if (!s)
        return;
    intmap_remove(&by_client, (uint32_t)client);
    session_free(s);
}

void sessions_fini(void)
{
    struct session *s;
    INTMAP_FOR_EACH(&by_client, s)
    session_free(s);
    intmap_free(&by_client);
}

enum session_verdict session_check(const struct session *s, uint64_t seq)
{
    if (seq == s->next_seq)
        return SESSION_NEW;
    return seq < s->next_seq ? SESSION_REPLAY : SESSION_GAP;
}

void session_served(struct session *s, uint64_t seq)
{
    if (seq >= s->next_seq)
        s->next_seq = seq + 1;
}

uint64_t session_next(const struct session *s)
{
    return s->next_seq;
}

void session_keep(struct session *s, uint64_t seq, int status, int64_t value)
{
    if (!s->kept) {
        s->kept = xcalloc(DS_MAX_UNANSWERED, sizeof(*s->kept));
        memstat_add(MEM_CONNECTIONS, (long)(sizeof(*s->kept) * DS_MAX_UNANSWERED));
    }
    s->kept[seq % DS_MAX_UNANSWERED] = (struct kept_answer){seq, value, status};
}

bool session_kept(const struct session *s, uint64_t seq, int *status, int64_t *value)
{
    const struct kept_answer *k = s->kept ? &s->kept[seq % DS_MAX_UNANSWERED] : NULL;
    if (!k || k->seq != seq)
        return false;
    *status = k->status;
    *value = k->value;
    return true;
}

void session_count_replay(void)
{
    recovery_stats.server_replays++;
}

void session_count_unserved(void)
{
    recovery_stats.unserved++;
}
