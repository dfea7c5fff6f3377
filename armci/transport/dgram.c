/*
 * The client's side of the hybrid UD data path (dgram.h). Runs under the
 * runtime lock, like the rest of the transport.
 */
#include "transport/dgram.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "core/acc.h"
#include "core/config.h"
#include "core/mutant.h"
#include "core/error.h"
#include "core/hybrid_stats.h"
#include "core/retransmit.h"
#include "core/runtime.h"
#include "core/topology.h"
#include "core/util.h"
#include "wire/dgram_protocol.h"
#include "wire/protocol.h"
#include "odcm/directory.h"
#include "odcm/ud.h"
#include "transport/dgram_peers.h"
#include "transport/numbering.h"
#include "transport/progress.h"
#include "verbs/device.h"
#include "verbs/endpoint.h"

#define CLIENT_SEND_BUFS 32
/* Receive buffers for answers: a server answers each datagram with one, so one node's full
 * window (ARMCI_HYBRID_WINDOW, 32 by default) of datagrams needs 32 (with fewer, 8 B puts over
 * UD took 185 us instead of 5: answers lost for want of a buffer, then retransmitted). With
 * requests in flight to several nodes at once their answers may all come together: the pool
 * doubles while more requests are unanswered than it has buffers, up to CLIENT_RECV_BUFS_MAX
 * (a 16 KiB get cut into 5 requests, 16 in flight to 16 nodes: 80 answers; 256 lost no fewer
 * answers than 128 in RandomAccess at 64 x 1 and held 0.5 MiB more a process). */
#define CLIENT_RECV_BUFS     32
#define CLIENT_RECV_BUFS_MAX 128

static bool on;
static struct ud_endpoint cud;
static struct endpoint sends; /* send completions: polled, never slept on */
static struct dgram_peer **busy;
static int nbusy, capbusy;
static int fenced_total; /* unanswered requests over all nodes: a fence of all waits for them */
/* When progress last ran with requests outstanding: an answer taken after a longer time away
 * (TIMER_AWAY_SECONDS) measured our absence, not the round trip, and is no RTT sample. */
static double polled_at;
static uint8_t *out;    /* the datagram being built */
static int answer_bufs; /* receive buffers posted for answers */
static size_t datagram;

int dgram_client_cq_entries(void)
{
    return cfg.hybrid_on ? 2 * CLIENT_RECV_BUFS_MAX : 0;
}

size_t dgram_room(const struct transfer *x)
{
    if (x->op == TRANSFER_GET)
        return datagram - sizeof(struct dgram_header) - sizeof(struct dgram_answer);
    size_t unit = x->op == TRANSFER_ACC ? acc_elem_size(x->datatype) : 1;
    return (datagram - sizeof(struct dgram_header) - sizeof(struct dgram_request)) / unit * unit;
}

static void mark_busy(struct dgram_peer *p)
{
    if (p->busy)
        return;
    GROW_FOR_ONE(busy, nbusy, capbusy, 8, xrealloc);
    busy[nbusy++] = p;
    p->busy = true;
}

/* ---- sending ---- */

/*
 * Sends the requests [from, to) of p that are not answered, as few datagrams
 * as they fit. Returns the number sent up to (all, or where the send buffers
 * ran out).
 */
static uint32_t send_range(struct dgram_peer *p, uint32_t from, uint32_t to)
{
    struct verbs_addr server;
    if (!directory_server_data(p->node, &server))
        return from; /* asked of its holder: sent at a progress after the answer */
    double now = now_seconds();
    uint32_t s = from;
    while (s != to) {
        size_t len = sizeof(struct dgram_header);
        uint8_t count = 0;
        uint32_t first = s;
        for (; s != to && count < UINT8_MAX; s++) {
            struct dgram_slot *sl = dgram_slot_at(p, s);
            if (sl->answered)
                continue;
            size_t payload = dgram_op_carries(sl->rq.op) ? sl->rq.len : 0;
            size_t step = dgram_step(sizeof(sl->rq), payload);
            if (len + step > datagram)
                break;
            memcpy(out + len, &sl->rq, sizeof(sl->rq));
            if (payload)
                memcpy(out + len + sizeof(sl->rq), sl->payload, payload);
            len += step;
            count++;
        }
        if (!count)
            continue; /* all answered */
        struct dgram_header h = {.magic = DGRAM_MAGIC,
                                 .kind = DGRAM_REQUESTS,
                                 .count = count,
                                 .rank = rt.me,
                                 .ack = p->base};
        memcpy(out, &h, sizeof(h));
        if (!ud_send_bytes(&cud, p->node, &server, out, len)) {
            endpoint_poll(&sends); /* completions give send buffers back */
            if (!ud_send_bytes(&cud, p->node, &server, out, len))
                return first; /* the rest goes at the next progress */
        }
        for (uint32_t k = first; k != s; k++) {
            struct dgram_slot *sl = dgram_slot_at(p, k);
            if (!sl->answered) {
                sl->sent_at = now;
                sl->sends++;
            }
        }
    }
    return s;
}

/* Sends what p has not sent yet, and starts its timer. */
static void flush(struct dgram_peer *p)
{
    if (p->unsent == p->next_seq)
        return;
    p->unsent = send_range(p, p->unsent, p->next_seq);
    if (!p->deadline && p->unsent != p->base) {
        /* The silence counts from the first send of what we wait for. */
        p->silent_since = polled_at = now_seconds();
        p->deadline = p->silent_since + p->rto;
    }
}

/* Bytes of the requests of p not sent yet. */
static size_t unsent_bytes(const struct dgram_peer *p)
{
    size_t len = sizeof(struct dgram_header);
    for (uint32_t s = p->unsent; s != p->next_seq; s++) {
        const struct dgram_slot *sl = dgram_slot_at(p, s);
        len += dgram_step(sizeof(sl->rq), dgram_op_carries(sl->rq.op) ? sl->rq.len : 0);
    }
    return len;
}

/* More requests are unanswered than answers have buffers: twice as many, within the bound. */
static void grow_answer_bufs(void)
{
#if ARMCI_MUTANT_IS(answer_bufs_fixed)
    return;
#endif
    if (answer_bufs >= CLIENT_RECV_BUFS_MAX)
        return;
    answer_bufs = MIN(2 * answer_bufs, CLIENT_RECV_BUFS_MAX);
    ud_grow_recv(&cud, answer_bufs);
}

/* Whether datagrams to node are unanswered (numbering.h: RC requests wait for them). */
static bool unanswered_to(int node)
{
    const struct dgram_peer *p = dgram_peer_find(node);
    return p && p->base != p->next_seq;
}

/* A slot for the next request to node: waits while its window is full. */
static struct dgram_slot *slot_new(struct dgram_peer *p, uint8_t op, const struct target *t,
                                   size_t len, struct handle *req, const char *what)
{
    while (p->next_seq - p->base >= (uint32_t)cfg.hybrid_window) {
        flush(p);
        progress_wait();
    }
    /* The node's one sequence space (numbering.h): with nothing in flight the window starts
     * at the node's next number (RC requests may have taken the ones before); with requests
     * in flight no RC request can have taken one (requests.c waits for these first). */
    uint32_t seq = (uint32_t)numbering_next(p->node);
    if (p->base == p->next_seq)
        p->base = p->unsent = p->next_seq = seq;
    else if (seq != p->next_seq)
        armci_die(NULL, "internal error: request %u to node %d over UD follows %u", seq, p->node,
                  p->next_seq - 1);
    if (p->next_seq - p->base >= p->cap)
        dgram_slots_grow(p);
    struct dgram_slot *sl = dgram_slot_at(p, p->next_seq);
    *sl = (struct dgram_slot){.rq = {.seq = p->next_seq,
                                     .op = op,
                                     .len = (uint32_t)len,
                                     .target_local = topo_local_index(t->proc),
                                     .addr = t->server_addr},
                              .req = req,
                              .what = what};
    p->next_seq++;
    p->fenced++;
    fenced_total++;
    if (fenced_total > answer_bufs)
        grow_answer_bufs();
    hybrid_stats.ud_ops++;
    handle_op_started(req);
    mark_busy(p);
    return sl;
}

/* Requests wait to share a datagram: they go when it would be full, when a caller blocks or
 * fences, or at the next progress. */
static void flush_if_full(struct dgram_peer *p)
{
    if (unsent_bytes(p) > datagram)
        flush(p);
}

/* One request of x: `len` bytes between local and t (the remote end). */
static void post_request(struct dgram_peer *p, const struct transfer *x, const struct target *t,
                         char *local, size_t len, struct handle *req)
{
    static const uint8_t ops[] = {
        [TRANSFER_PUT] = DGRAM_PUT, [TRANSFER_GET] = DGRAM_GET, [TRANSFER_ACC] = DGRAM_ACC};
    static const char *const names[] = {
        [TRANSFER_PUT] = "put", [TRANSFER_GET] = "get", [TRANSFER_ACC] = "accumulate"};
    struct dgram_slot *sl = slot_new(p, ops[x->op], t, len, req, names[x->op]);
    if (x->op == TRANSFER_GET) {
        sl->dest = local;
    } else {
        sl->payload = dgram_payload_copy(local, len);
    }
    if (x->op == TRANSFER_ACC) {
        sl->rq.datatype = (uint8_t)x->datatype;
        memcpy(sl->rq.scale, x->scale, acc_elem_size(x->datatype));
    }
    flush_if_full(p);
}

/* One contiguous piece of x, cut into requests of the room one carries (whole elements for
 * an accumulate): consecutive numbers, so the server applies them in order, each once. */
static void post_piece(struct dgram_peer *p, const struct transfer *x, const struct target *t,
                       char *local, size_t len, struct handle *req)
{
    size_t room = dgram_room(x);
    for (size_t off = 0; off < len; off += room) {
        struct target part = *t;
        part.server_addr += off;
#if ARMCI_MUTANT_IS(dgram_segment_unmoved)
        part.server_addr = t->server_addr;
#endif
        post_request(p, x, &part, local + off, MIN(room, len - off), req);
    }
}

void dgram_transfer(const struct transfer *x, struct handle *req, bool blocking)
{
    const struct target *first = x->locals ? &x->remotes[0] : &x->remote;
    struct dgram_peer *p = dgram_peer_of(first->node);
    struct handle done = {0};
    struct handle *r = blocking && x->op == TRANSFER_GET ? &done : req;
    if (x->locals) {
        for (int i = 0; i < x->n; i++)
            post_piece(p, x, &x->remotes[i], x->locals[i], x->bytes, r);
    } else {
        /* Each chunk of a strided box is a request (one, for a contiguous transfer). */
        bool get = x->op == TRANSFER_GET;
        struct stride_iter it;
        for (stride_iter_begin(&it, &x->d); !it.done; stride_iter_next(&it)) {
            struct target t = x->remote;
            t.server_addr += get ? it.src_off : it.dst_off;
            post_piece(p, x, &t, x->local + (get ? it.dst_off : it.src_off), (size_t)x->d.count[0],
                       r);
        }
    }
    if (blocking)
        flush(p);
    if (r == &done)
        handle_wait(&done);
}

long dgram_rmw(const struct target *t, int op, long value, size_t size)
{
    struct dgram_peer *p = dgram_peer_of(t->node);
    struct handle done = {0};
    int64_t old = 0;
    struct dgram_slot *sl = slot_new(p, DGRAM_RMW, t, size, &done, "read-modify-write");
    sl->rq.rmw_op = (uint8_t)op;
    sl->rq.value = value;
    sl->result = &old;
    flush(p);
    handle_wait(&done);
    return (long)old;
}

/* ---- answers ---- */

/* How long a node's server may stay silent before it is lost: an outage the RC connections
 * would be recovered from (ARMCI_RECOVERY_TIMEOUT) is waited out over UD too. */
static double silence_limit(void)
{
    return cfg.recovery_timeout > cfg.hybrid_timeout ? cfg.recovery_timeout : cfg.hybrid_timeout;
}

/* Karn: an RTT sample only from a request sent once. */
static void rtt_sample(struct dgram_peer *p, double rtt)
{
    if (p->srtt == 0) {
        p->srtt = rtt;
        p->rttvar = rtt / 2;
    } else {
        double err = rtt - p->srtt;
        p->srtt += err / 8;
        p->rttvar += ((err < 0 ? -err : err) - p->rttvar) / 4;
    }
    p->rto = MIN(MAX(cfg.hybrid_rto, p->srtt + 4 * p->rttvar),
                 retransmit_limit(RETRANSMIT_CEILING, silence_limit(), cfg.hybrid_rto));
}

static void answered(struct dgram_peer *p, struct dgram_slot *sl, const struct dgram_answer *a,
                     const void *data)
{
    if (a->status != DS_OK)
        armci_die(NULL, "the data server of node %d rejected a %s over UD: %s", p->node, sl->what,
                  ds_status_name(a->status));
    if (sl->rq.op == DGRAM_GET)
        memcpy(sl->dest, data, sl->rq.len);
    if (sl->result)
        *sl->result = sl->rq.len == sizeof(int) ? (int64_t)(int32_t)a->value : a->value;
    if (retransmit_may_sample(sl->sends, polled_at, now_seconds()))
        rtt_sample(p, now_seconds() - sl->sent_at);
    dgram_payload_free(sl);
    sl->answered = true;
    p->fenced--;
    fenced_total--;
    handle_op_done(sl->req);
}

/* Moves p's window past the answered requests at its start; restarts or stops its timer. */
static void advance(struct dgram_peer *p)
{
    while (p->base != p->unsent && dgram_slot_at(p, p->base)->answered)
        p->base++;
    p->deadline = p->base == p->unsent ? 0 : now_seconds() + p->rto;
}

static void refuse(const struct ud_sender *from, const char *why)
{
    hybrid_stats.refused++;
    ud_refuse(&cud, from, why);
}

static void on_answers(void *ctx, const struct ud_sender *from, const void *bytes, size_t len)
{
    (void)ctx;
    struct dgram_header h;
    const char *bad = dgram_read_header(bytes, len, DGRAM_ANSWERS, &h);
    if (!bad && (h.rank < 0 || h.rank >= topo.num_nodes))
        bad = "names no node of this job";
    if (bad) {
        refuse(from, bad);
        return;
    }
    struct verbs_addr server;
    struct dgram_peer *p = dgram_peer_find(h.rank);
    if (!p || !directory_known_server_data(h.rank, &server) || !ud_sender_is(from, &server)) {
        refuse(from, "not sent by the data server of the node it names");
        return;
    }
    p->silent_since = now_seconds();
    const uint8_t *at = (const uint8_t *)bytes + sizeof(h);
    size_t left = len - sizeof(h);
    for (int i = 0; i < h.count && left >= sizeof(struct dgram_answer); i++) {
        struct dgram_answer a;
        memcpy(&a, at, sizeof(a));
        if (a.len > left - sizeof(a))
            break;
        uint32_t k = a.seq - p->base;
        struct dgram_slot *sl = k < p->unsent - p->base ? dgram_slot_at(p, a.seq) : NULL;
        bool fits = sl && (sl->rq.op != DGRAM_GET || a.status != DS_OK || a.len == sl->rq.len);
        if (sl && !sl->answered && fits)
            answered(p, sl, &a, at + sizeof(a));
        else
            hybrid_stats.answers_late++;
        size_t step = dgram_step(sizeof(a), a.len);
        if (step >= left)
            break;
        at += step;
        left -= step;
    }
    advance(p);
}

/* ---- progress: deferred sends, timers ---- */

static void retransmit(struct dgram_peer *p, double now)
{
    if (retransmit_was_away(p->deadline, now))
        p->silent_since = now; /* we were away: what was lost meanwhile is sent again first */
    if (now - p->silent_since > silence_limit()) {
        char node[160];
        topo_describe_node(p->node, node, sizeof(node));
        armci_die(NULL,
                  "%s is lost: its data server answered nothing over UD for %.1f s while %u "
                  "requests waited (ARMCI_HYBRID_TIMEOUT=%g, ARMCI_RECOVERY_TIMEOUT=%g)",
                  node, now - p->silent_since, p->unsent - p->base, cfg.hybrid_timeout,
                  cfg.recovery_timeout);
    }
    hybrid_stats.retransmissions++;
    ud_check(&cud); /* a silent server, or our own QP deaf: asks the device */
    send_range(p, p->base, p->unsent);
    p->rto = retransmit_backoff(p->rto, RETRANSMIT_CEILING, silence_limit(), cfg.hybrid_rto);
    p->deadline = now + p->rto;
}

static int progress(void)
{
    int n = endpoint_poll(&sends);
    double now = 0;
    if (nbusy > 0)
        polled_at = now = now_seconds();
    for (int i = 0; i < nbusy; i++) {
        struct dgram_peer *p = busy[i];
        flush(p);
        if (p->deadline && now >= p->deadline)
            retransmit(p, now);
        if (p->base == p->next_seq) {
            p->busy = false;
            busy[i--] = busy[--nbusy];
            dgram_slots_shrink(p);
        }
    }
    return n;
}

static double next_deadline(void)
{
    double first = -1;
    for (int i = 0; i < nbusy; i++)
        if (busy[i]->deadline && (first < 0 || busy[i]->deadline < first))
            first = busy[i]->deadline;
    if (first < 0)
        return -1;
    double left = first - now_seconds();
    return left > 0 ? left : 0;
}

void dgram_fence(int node)
{
#if ARMCI_MUTANT_IS(dgram_fence_noop)
    return; /* the bug: a fence does not wait for the node's requests over UD */
#endif
    if (!on)
        return;
    struct dgram_peer *p = dgram_peer_find(node);
    while (p && p->fenced > 0) {
        flush(p);
        progress_wait();
    }
}

void dgram_fence_all(void)
{
#if ARMCI_MUTANT_IS(dgram_fence_noop)
    return;
#endif
    if (!on)
        return;
    while (fenced_total > 0) {
        for (int i = 0; i < nbusy; i++)
            flush(busy[i]);
        progress_wait();
    }
}

/* ---- life ---- */

void dgram_init(void)
{
    on = cfg.hybrid_on;
    if (!on)
        return;
    datagram = dgram_size(cfg.hybrid_size, (int)vdev.mtu);
    out = xmalloc(datagram);
    endpoint_create(&sends, "client UD data sends", 2 * CLIENT_SEND_BUFS, false);
    ud_create_data(&cud, &sends, progress_cq(), "client, data", datagram, CLIENT_SEND_BUFS,
                   CLIENT_RECV_BUFS, CLIENT_RECV_BUFS_MAX, on_answers, NULL);
    answer_bufs = CLIENT_RECV_BUFS;
    directory_offer_client_data(cud.qp->qp_num);
    progress_add_datagrams(progress, next_deadline);
    numbering_set_ud_query(unanswered_to);
}

void dgram_fini(void)
{
    if (!on)
        return;
    dgram_peers_fini();
    free(busy);
    busy = NULL;
    nbusy = capbusy = 0;
    fenced_total = 0;
    ud_destroy(&cud);
    endpoint_destroy(&sends);
    free(out);
    out = NULL;
    on = false;
}
