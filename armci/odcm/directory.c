#include "odcm/directory.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/intmap.h"
#include "core/memstat.h"
#include "core/mutant.h"
#include "core/retransmit.h"
#include "core/runtime.h"
#include "core/shm.h"
#include "core/topology.h"
#include "core/util.h"

/* What each process publishes, and what a holder answers. */
struct dir_entry {
    struct verbs_addr client_ud;
    int32_t rank;
    uint32_t server_ud_qpn;   /* masters only */
    uint32_t client_data_qpn; /* the UD data path, if on */
    uint32_t server_data_qpn; /* masters only, if on */
};

/* The node's block: its counts, then the holders' masters' entries (by node), this node's
 * processes' and, on a holder, its span's processes' (both by rank). */
struct dir_block {
    int32_t span, nholders, nown, nheld;
    struct dir_entry entries[];
};

/* A rank a side asked about: its entry once the holder answered, and the datagrams that
 * wait for it (the data server's side). */
struct dir_parked {
    struct dir_parked *next;
    dir_replay_fn replay;
    struct ud_sender from;
    size_t len;
    uint8_t bytes[];
};
struct dir_known {
    struct dir_entry e;
    bool have;
    double asked_at;     /* the last ask */
    double asking_since; /* the first unanswered ask */
    int nparked;
    struct dir_parked *parked;
};
struct dir_side_state {
    struct ud_endpoint *via;
    struct intmap known; /* rank -> struct dir_known */
    long bytes;          /* of the records and what waits in them */
};

/* A lookup lost is asked again by the next call that needs the entry, at most this often. */
#define DIR_ASK_INTERVAL 0.001
/* Datagrams the data server keeps for one rank it asked about, and the memory their copies
 * take for all of them, records included: the directory's bound on them (a burst of first
 * contacts: about 256 small requests, or 3 of the largest datagrams). */
#define DIR_PARK_PER_RANK 4
#define DIR_PARK_BYTES    16384

static struct dir_block *block;
static size_t block_size;
static struct dir_side_state sides[2];
static uint32_t offered_client, offered_server;
static long held; /* this process's share of the block */
static size_t parked_bytes;
static long lookups, learned[2];

void directory_offer_client_data(uint32_t qpn)
{
    offered_client = qpn;
}

void directory_offer_server_data(uint32_t qpn)
{
    offered_server = qpn;
}

void directory_attach(enum dir_side side, struct ud_endpoint *via)
{
    sides[side].via = via;
}

/* Nodes a holder keeps: as few as ARMCI_DIRECTORY_BYTES allows, so that lookups spread over
 * as many holders as it pays for (every node, and none, while the job is small). */
static int span_for(int nodes)
{
    long span = ((long)nodes * (long)sizeof(struct dir_entry) + cfg.directory_bytes - 1) /
                cfg.directory_bytes;
    return span < 1 ? 1 : (int)span;
}

static int holder_of(int node)
{
    return node / block->span * block->span;
}

static int by_rank(const void *a, const void *b)
{
    int32_t x = ((const struct dir_entry *)a)->rank, y = ((const struct dir_entry *)b)->rank;
    return (x > y) - (x < y);
}

/* The entries of `comm`'s members, each giving `count` of them, gathered at its rank 0 and
 * sorted by rank there (NULL elsewhere); *total their number. */
static struct dir_entry *gather_sorted(const struct dir_entry *mine, int count, MPI_Comm comm,
                                       int *total)
{
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    int bytes = count * (int)sizeof(*mine);
    int *counts = me == 0 ? xmalloc(sizeof(int) * (size_t)size) : NULL;
    int *displs = me == 0 ? xmalloc(sizeof(int) * (size_t)size) : NULL;
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    struct dir_entry *all = NULL;
    *total = 0;
    if (me == 0) {
        int at = 0;
        for (int i = 0; i < size; i++) {
            displs[i] = at;
            at += counts[i];
        }
        *total = at / (int)sizeof(*mine);
        all = xmalloc((size_t)at + 1);
    }
    MPI_Gatherv(mine, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, comm);
    if (all)
        qsort(all, (size_t)*total, sizeof(*all), by_rank);
    free(counts);
    free(displs);
    return all;
}

/*
 * On a master: the holders' entries (*nholders) and, on a holder, its span's (*held_entries,
 * *nheld). The masters of a span gather their nodes' entries at its holder; the holders
 * all-gather theirs and hand them to their span.
 */
static struct dir_entry *gather_holders(const struct dir_entry *own, int nown, int span,
                                        int *nholders, struct dir_entry **span_entries, int *nheld)
{
    MPI_Comm span_comm, holders_comm;
    int node = topo.my_node; /* a master's rank in master_comm is its node's number */
    MPI_Comm_split(topo.master_comm, node / span, node, &span_comm);
    *span_entries = NULL;
    *nheld = 0;
    if (span > 1) /* else its span is its node: its own entries */
        *span_entries = gather_sorted(own, nown, span_comm, nheld);
    bool holder = node % span == 0;
    MPI_Comm_split(topo.master_comm, holder ? 0 : MPI_UNDEFINED, node, &holders_comm);
    *nholders = (topo.num_nodes + span - 1) / span;
    struct dir_entry *holders = xmalloc(sizeof(*holders) * (size_t)*nholders);
    if (holder) {
        const struct dir_entry *master = &own[0]; /* the lowest rank of the node */
        MPI_Allgather(master, sizeof(*master), MPI_BYTE, holders, sizeof(*master), MPI_BYTE,
                      holders_comm);
        MPI_Comm_free(&holders_comm);
    }
    MPI_Bcast(holders, (int)sizeof(*holders) * *nholders, MPI_BYTE, 0, span_comm);
    MPI_Comm_free(&span_comm);
    return holders;
}

/*
 * Every process gives its entry to its master; the masters gather them at holders (above);
 * each master writes its node's block, which the node's processes map. They count a k-th of
 * it each (the master the rest).
 */
void directory_publish(struct verbs_addr client_ud, uint32_t server_ud_qpn)
{
    struct dir_entry mine = {client_ud, rt.me, server_ud_qpn, offered_client, offered_server};
    int nown = 0, nholders = 0, nheld = 0;
    struct dir_entry *own = gather_sorted(&mine, 1, topo.node_comm, &nown);
    struct dir_entry *holders = NULL, *span_entries = NULL;
    int span = span_for(topo.num_nodes);
    if (topo_is_master())
        holders = gather_holders(own, nown, span, &nholders, &span_entries, &nheld);
    int32_t counts[3] = {nholders, nown, nheld};
    MPI_Bcast(counts, 3, MPI_INT32_T, 0, topo.node_comm);
    block_size =
        sizeof(*block) + sizeof(struct dir_entry) * (size_t)(counts[0] + counts[1] + counts[2]);
    char tag[32];
    snprintf(tag, sizeof(tag), "dir%d", topo.my_node);
    block = shm_map_collective(topo.node_comm, tag, block_size, NULL, NULL);
    if (topo_is_master()) {
        *block = (struct dir_block){span, nholders, nown, nheld};
        struct dir_entry *e = block->entries;
        memcpy(e, holders, sizeof(*e) * (size_t)nholders);
        memcpy(e + nholders, own, sizeof(*e) * (size_t)nown);
        memcpy(e + nholders + nown, span_entries, sizeof(*e) * (size_t)nheld);
    }
    free(holders);
    free(own);
    free(span_entries);
    MPI_Barrier(topo.node_comm); /* written before anyone reads */

    long k = topo_node_nprocs(topo.my_node);
    held = (long)block_size / k + (topo_is_master() ? (long)block_size % k : 0);
    memstat_add(MEM_DIRECTORY, held);
}

static void forget(struct dir_side_state *s)
{
    struct dir_known *kn;
    INTMAP_FOR_EACH(&s->known, kn)
    {
        for (struct dir_parked *p = kn->parked, *next; p; p = next) {
            next = p->next;
            free(p);
        }
        free(kn);
    }
    /* The table was moved to the directory's count; intmap_free takes it from connections. */
    memstat_add(MEM_CONNECTIONS, intmap_table_bytes(&s->known));
    intmap_free(&s->known);
    memstat_add(MEM_DIRECTORY, -s->bytes);
    *s = (struct dir_side_state){0};
}

void directory_fini(void)
{
    forget(&sides[DIR_CLIENTS]);
    forget(&sides[DIR_SERVER]);
    shm_unmap(block, block_size);
    block = NULL;
    block_size = 0;
    offered_client = offered_server = 0;
    memstat_add(MEM_DIRECTORY, -held);
    held = 0;
    parked_bytes = 0;
    __atomic_store_n(&lookups, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&learned[DIR_CLIENTS], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&learned[DIR_SERVER], 0, __ATOMIC_RELAXED);
}

static const struct dir_entry *search(const struct dir_entry *e, int n, int rank)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (e[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && e[lo].rank == rank ? &e[lo] : NULL;
}

/* The entry of rank if the block has it: this node's, a holder's master's, or the span's
 * this node holds. */
static const struct dir_entry *in_block(int rank)
{
    const struct dir_entry *holders = block->entries, *own = holders + block->nholders,
                           *span = own + block->nown;
    int node = topo_node_of(rank);
    if (node == topo.my_node)
        return search(own, block->nown, rank);
    if (holder_of(node) == topo.my_node)
        return search(span, block->nheld, rank);
    if (node % block->span == 0 && rank == topo_node_master(node))
        return &holders[node / block->span];
    return NULL;
}

/* The address of node's data server, from its master's entry. */
static struct verbs_addr server_port(const struct dir_entry *master, uint32_t qpn)
{
    struct verbs_addr a = master->client_ud;
    a.qpn = qpn;
    a.psn = 0;
    return a;
}

/* Read by the other thread of a master (directory_bytes): atomic. */
static void account(struct dir_side_state *s, long bytes)
{
    __atomic_add_fetch(&s->bytes, bytes, __ATOMIC_RELAXED);
    memstat_add(MEM_DIRECTORY, bytes);
}

/* Asks rank's holder for its entry, unless asked within DIR_ASK_INTERVAL. */
static void ask(struct dir_side_state *s, struct dir_known *kn, int rank)
{
    double now = now_seconds();
    /* Asked again after a long time away (the process computed): the silence is ours. */
    if (!kn->asking_since || retransmit_was_away(kn->asked_at, now))
        kn->asking_since = now;
    if (s == &sides[DIR_CLIENTS] && now - kn->asking_since > cfg.connect_timeout)
        armci_die(NULL,
                  "no answer within ARMCI_CONNECT_TIMEOUT=%g s from the data server of node %d, "
                  "which holds the UD addresses of node %d (rank %d): is it alive?",
                  cfg.connect_timeout, holder_of(topo_node_of(rank)), topo_node_of(rank), rank);
    if (kn->asked_at && now - kn->asked_at < DIR_ASK_INTERVAL)
        return;
#if ARMCI_MUTANT_IS(lookup_asked_once)
    if (kn->asked_at)
        return; /* the bug: a lookup lost is never asked again */
#endif
    int holder = holder_of(topo_node_of(rank));
    const struct dir_entry *master = &block->entries[holder / block->span];
    struct verbs_addr to = server_port(master, master->server_ud_qpn);
    struct cm_msg m = {.type = CM_LOOKUP, .rank = rank, .node = holder, .epoch = 1};
    /* The channels' AH keys: nodes for the clients' (servers), ranks for the server's. */
    int key = s == &sides[DIR_CLIENTS] ? holder : master->rank;
    if (ud_send(s->via, key, &to, &m)) { /* if busy, the next call asks again */
        kn->asked_at = now;
        __atomic_add_fetch(&lookups, 1, __ATOMIC_RELAXED);
    }
}

/* The entry of rank for a side, or NULL (after asking its holder, if `asking`). */
static const struct dir_entry *find(enum dir_side side, int rank, bool asking)
{
    const struct dir_entry *e = in_block(rank);
    if (e)
        return e;
    struct dir_side_state *s = &sides[side];
    struct dir_known *kn = intmap_get(&s->known, (uint32_t)rank);
    if (kn && kn->have)
        return &kn->e;
    if (!asking)
        return NULL;
    if (!kn) {
        kn = xcalloc(1, sizeof(*kn));
        long table = intmap_table_bytes(&s->known);
        intmap_put(&s->known, (uint32_t)rank, kn);
        table = intmap_table_bytes(&s->known) - table;
        memstat_add(MEM_CONNECTIONS, -table);
        account(s, (long)sizeof(*kn) + table);
    }
    ask(s, kn, rank);
    return NULL;
}

/* Node's data server's port with its UD QP (connections) or data QP (the hybrid path). */
static bool server_at(int node, bool data, bool asking, struct verbs_addr *out)
{
    const struct dir_entry *e = find(DIR_CLIENTS, topo_node_master(node), asking);
    if (e)
        *out = server_port(e, data ? e->server_data_qpn : e->server_ud_qpn);
    return e != NULL;
}

bool directory_server(int node, struct verbs_addr *out)
{
    return server_at(node, false, true, out);
}

bool directory_server_data(int node, struct verbs_addr *out)
{
    return server_at(node, true, true, out);
}

bool directory_known_server(int node, struct verbs_addr *out)
{
    return server_at(node, false, false, out);
}

bool directory_known_server_data(int node, struct verbs_addr *out)
{
    return server_at(node, true, false, out);
}

bool directory_client(int rank, struct verbs_addr *out)
{
    const struct dir_entry *e = find(DIR_SERVER, rank, true);
    if (e)
        *out = e->client_ud;
    return e != NULL;
}

bool directory_client_data(int rank, struct verbs_addr *out)
{
    const struct dir_entry *e = find(DIR_SERVER, rank, true);
    if (e) {
        *out = e->client_ud;
        out->qpn = e->client_data_qpn;
    }
    return e != NULL;
}

void directory_park(int rank, const struct ud_sender *from, const void *bytes, size_t len,
                    dir_replay_fn replay)
{
    struct dir_side_state *s = &sides[DIR_SERVER];
    struct dir_known *kn = intmap_get(&s->known, (uint32_t)rank);
    size_t cost = sizeof(struct dir_parked) + len;
    if (!kn || kn->have || kn->nparked >= DIR_PARK_PER_RANK || parked_bytes + cost > DIR_PARK_BYTES)
        return; /* its sender retransmits */
    struct dir_parked *p = xmalloc(cost);
    *p = (struct dir_parked){.replay = replay, .from = *from, .len = len};
    memcpy(p->bytes, bytes, len);
    struct dir_parked **tail = &kn->parked; /* in arrival order */
    while (*tail)
        tail = &(*tail)->next;
    *tail = p;
    kn->nparked++;
    parked_bytes += cost;
    account(s, (long)cost);
}

/* A holder's data server: the entry asked for, to whoever asked (it is no secret). */
static int answer_lookup(enum dir_side side, const struct ud_sender *from, const struct cm_msg *m)
{
    struct ud_endpoint *via = sides[side].via;
    if (side != DIR_SERVER || m->rank < 0 || m->rank >= rt.nprocs || m->node != topo.my_node ||
        holder_of(topo_node_of(m->rank)) != topo.my_node) {
        ud_refuse(via, from, "a lookup of a rank this node does not hold");
        return -1;
    }
    const struct dir_entry *e = in_block(m->rank);
    if (!e)
        return -1; /* every rank of the span was gathered here */
    struct cm_msg a = {.type = CM_ENTRY,
                       .rank = m->rank,
                       .node = topo_node_of(m->rank),
                       .epoch = m->epoch,
                       .credits = (int32_t)e->client_data_qpn,
                       .resume = (uint64_t)e->server_ud_qpn << 32 | e->server_data_qpn,
                       .qp = e->client_ud};
    ud_reply(via, from, &a); /* if busy, the asker asks again */
    return -1;
}

/* Whether m, an entry, came from the holder of the rank it names (its data server). */
static bool from_holder(const struct ud_sender *from, const struct cm_msg *m)
{
    const struct dir_entry *master = &block->entries[holder_of(m->node) / block->span];
    struct verbs_addr holder = server_port(master, master->server_ud_qpn);
#if ARMCI_MUTANT_IS(entry_sender_unchecked)
    (void)from;
    (void)holder;
    return true; /* the bug: anybody's answer is believed */
#endif
    return ud_sender_is(from, &holder);
}

static void replay_parked(struct dir_side_state *s, struct dir_known *kn)
{
    struct dir_parked *p = kn->parked;
    kn->parked = NULL;
    kn->nparked = 0;
    while (p) {
        struct dir_parked *next = p->next;
        size_t cost = sizeof(*p) + p->len; /* as directory_park counted it */
        parked_bytes -= cost;
        p->replay(&p->from, p->bytes, p->len);
        account(s, -(long)cost);
        free(p);
        p = next;
    }
}

int directory_on_message(enum dir_side side, const struct ud_sender *from, const struct cm_msg *m)
{
    if (m->type == CM_LOOKUP)
        return answer_lookup(side, from, m);
    struct dir_side_state *s = &sides[side];
    bool valid = m->rank >= 0 && m->rank < rt.nprocs && m->node == topo_node_of(m->rank) &&
                 m->qp.qpn != 0 && m->qp.qpn <= CM_QPN_MASK && m->qp.psn == 0 &&
                 (uint32_t)m->credits <= CM_QPN_MASK && m->gather == 0;
    if (!valid || !from_holder(from, m)) {
        ud_refuse(s->via, from, valid ? "an entry not sent by its holder" : "malformed entry");
        return -1;
    }
    struct dir_known *kn = intmap_get(&s->known, (uint32_t)m->rank);
    if (!kn || kn->have)
        return -1; /* not asked, or a repeated answer */
    kn->e = (struct dir_entry){.client_ud = m->qp,
                               .rank = m->rank,
                               .server_ud_qpn = (uint32_t)(m->resume >> 32),
                               .client_data_qpn = (uint32_t)m->credits,
                               .server_data_qpn = (uint32_t)m->resume};
    kn->have = true;
    __atomic_add_fetch(&learned[side], 1, __ATOMIC_RELAXED);
    replay_parked(s, kn);
    return m->rank;
}

long directory_bytes(void)
{
    return held + __atomic_load_n(&sides[DIR_CLIENTS].bytes, __ATOMIC_RELAXED) +
           __atomic_load_n(&sides[DIR_SERVER].bytes, __ATOMIC_RELAXED);
}

long directory_shared_bytes(void)
{
    return held;
}

long directory_node_bytes(void)
{
    return (long)block_size;
}

long directory_lookups(void)
{
    return __atomic_load_n(&lookups, __ATOMIC_RELAXED);
}

long directory_learned(enum dir_side side)
{
    return __atomic_load_n(&learned[side], __ATOMIC_RELAXED);
}
