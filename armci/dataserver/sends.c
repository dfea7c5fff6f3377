/* The data server's send side (sends.h). */
#include "dataserver/sends.h"

#include <errno.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "core/wr_id.h"
#include "dataserver/resources.h"
#include "odcm/cm_server.h"

static int sends_posted; /* over all connections, against server_send_budget() */

/*
 * A failed send means the client's QP refused what the client itself asked
 * for (e.g. a packed get's reply address with a bad rkey): the connection
 * is now in error and the client sees that on its side. It costs that
 * client its connection, never the server or its other clients.
 */
static void send_done(struct server_conn *sc, const struct ibv_wc *wc)
{
    sc->sq_posted--;
    sends_posted--;
    if (wc->status == IBV_WC_SUCCESS)
        return;
    if (sc->broken)
        return;
    armci_warn("data server: connection of client rank %d failed (%s): its requests are no "
               "longer served%s",
               sc->client, ibv_wc_status_str(wc->status),
               cfg.recovery_timeout > 0 ? " until it connects anew" : "");
    sc->broken = true;
    /* A path that broke is set up anew by the client; a request it could not answer (a
     * reply buffer it may not write) is that client's mistake, which it hears of itself. */
    if (wc->status == IBV_WC_RETRY_EXC_ERR || wc->status == IBV_WC_LOC_QP_OP_ERR ||
        wc->status == IBV_WC_WR_FLUSH_ERR)
        cm_server_tell_broken(sc->client);
}

static void on_reply_sent(void *ctx, const struct ibv_wc *wc)
{
    send_done(wr_id_pointer(wc->wr_id), wc);
}

static void on_out_buf_sent(void *ctx, const struct ibv_wc *wc)
{
    struct pool_buffer *o = wr_id_pointer(wc->wr_id);
    struct server_conn *sc = o->owner;
    buffer_pool_release(&ds_res.out, o);
    send_done(sc, wc);
}

/* One RDMA read of client data (server_pull): in flight until its completion says how it went. */
struct pull {
    struct server_conn *sc;
    bool done;
    int status; /* enum ibv_wc_status */
};

static void on_pulled(void *ctx, const struct ibv_wc *wc)
{
    struct pull *p = wr_id_pointer(wc->wr_id);
    p->done = true;
    p->status = wc->status;
    send_done(p->sc, wc);
}

void sends_init(void)
{
    endpoint_on(&ds_res.sends, WR_TAG_POINTER, on_reply_sent, NULL);
    endpoint_on(&ds_res.sends, WR_TAG_OUTBUF, on_out_buf_sent, NULL);
    endpoint_on(&ds_res.sends, WR_TAG_PULL, on_pulled, NULL);
}

void server_drain_sends(void)
{
    endpoint_poll(&ds_res.sends);
}

int server_sends_in_flight(void)
{
    return sends_posted;
}

int server_pull(struct server_conn *sc, const struct ibv_sge *into, int n, uint64_t raddr,
                uint32_t rkey)
{
    if (sc->broken)
        return EPIPE;
    struct pull p = {.sc = sc};
    struct ibv_send_wr wr = {
        .wr_id = wr_id_make((uintptr_t)&p, WR_TAG_PULL),
        .sg_list = (struct ibv_sge *)into,
        .num_sge = n,
        .opcode = IBV_WR_RDMA_READ,
        .send_flags = IBV_SEND_SIGNALED,
        .wr = {.rdma = {.remote_addr = raddr, .rkey = rkey}},
    };
    server_reserve_sends(sc, 2); /* the read and the answer */
    server_post_send(sc, &wr);
    if (sc->broken)
        return EPIPE;
    while (!p.done)
        server_drain_sends();
    if (p.status == IBV_WC_SUCCESS)
        return 0;
    /* The client's memory refused the read (its address or key): the request's fault. Any other
     * failure is the connection's, which the client replaces and replays the request on. */
    return p.status == IBV_WC_REM_ACCESS_ERR ? EFAULT : EPIPE;
}

void server_reserve_sends(struct server_conn *sc, int n)
{
    while (sc->sq_posted + n > cm_server_send_depth() || sends_posted + n > server_send_budget())
        server_drain_sends();
}

size_t server_out_buf_size(void)
{
    return ds_res.out.size;
}

struct pool_buffer *server_out_buf_get(void)
{
    struct pool_buffer *o;
    while (!(o = buffer_pool_get(&ds_res.out)))
        server_drain_sends();
    return o;
}

void server_post_send(struct server_conn *sc, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(sc->qp, wr, &bad);
    if (rc == 0) {
        sc->sq_posted++;
        sends_posted++;
        return;
    }
    /* A QP in error may refuse new work outright: the same as a failed completion. */
    if (!sc->broken)
        armci_warn("data server: ibv_post_send to client rank %d failed: %s", sc->client,
                   strerror(rc));
    sc->broken = true;
    if (wr_id_tag(wr->wr_id) == WR_TAG_OUTBUF)
        buffer_pool_release(&ds_res.out, wr_id_pointer(wr->wr_id));
}
