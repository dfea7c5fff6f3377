/* The data server's send side (sends.h). */
#include "dataserver/sends.h"

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
void server_send_completed(struct server_conn *sc, const struct ibv_wc *wc)
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

void server_end_broke(struct server_conn *sc, const char *why)
{
    if (sc->broken)
        return;
    armci_warn("data server: its end of client rank %d's connection broke (%s)", sc->client, why);
    sc->broken = true;
    cm_server_tell_broken(sc->client);
}

static void on_reply_sent(void *ctx, const struct ibv_wc *wc)
{
    server_send_completed(wr_id_pointer(wc->wr_id), wc);
}

static void on_out_buf_sent(void *ctx, const struct ibv_wc *wc)
{
    struct pool_buffer *o = wr_id_pointer(wc->wr_id);
    struct server_conn *sc = o->owner;
    buffer_pool_release(&ds_res.out, o);
    server_send_completed(sc, wc);
}

void sends_init(void)
{
    endpoint_on(&ds_res.sends, WR_TAG_POINTER, on_reply_sent, NULL);
    endpoint_on(&ds_res.sends, WR_TAG_OUTBUF, on_out_buf_sent, NULL);
}

void server_drain_sends(void)
{
    endpoint_poll(&ds_res.sends);
}

int server_sends_in_flight(void)
{
    return sends_posted;
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

static void (*out_buf_wait)(void); /* what else gives out buffers back (server.c) */

void sends_on_out_buf_wait(void (*fn)(void))
{
    out_buf_wait = fn;
}

struct pool_buffer *server_out_buf_get(void)
{
    struct pool_buffer *o;
    while (!(o = buffer_pool_get(&ds_res.out))) {
        server_drain_sends();
        if (out_buf_wait)
            out_buf_wait();
    }
    return o;
}

void server_out_buf_put(struct pool_buffer *o)
{
    buffer_pool_release(&ds_res.out, o);
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
