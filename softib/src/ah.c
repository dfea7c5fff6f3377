/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addressing: GIDs of each context's port, address-vector checks (RoCE
 * needs a GRH), address handles, building an AH from a received UD
 * completion, and the GRH a UD receiver finds.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

int sib_gid_count(void)
{
    /* RoCE: [0] link-local from the GUID, [1] IPv4-mapped (RoCEv2), as rxe */
    return sib_fab.hdr && sib_fab.hdr->roce ? 2 : 1;
}

union ibv_gid sib_gid(uint16_t lid, int index)
{
    union ibv_gid g;
    uint64_t guid = 0x02536f6674000000ull | lid; /* port GUID */

    memset(&g, 0, sizeof(g));
    if (index == 1) {
        g.raw[10] = 0xff;
        g.raw[11] = 0xff;
        g.raw[12] = 10;
        g.raw[13] = 78;
        g.raw[14] = (uint8_t)(lid >> 8);
        g.raw[15] = (uint8_t)lid;
        return g;
    }
    g.global.subnet_prefix = htobe64(0xfe80000000000000ull);
    g.global.interface_id = htobe64(guid);
    return g;
}

int sib_check_ah_attr(const struct ibv_ah_attr *ah)
{
    if (ah->port_num != 1)
        return EINVAL;
    if (sib_fab.hdr->roce && !ah->is_global)
        return EINVAL; /* RoCE routes by GID only */
    if (ah->is_global && ah->grh.sgid_index >= sib_gid_count())
        return sib_fab.hdr->roce ? ENODATA : EINVAL; /* what rxe returns */
    return 0;
}

static struct sib_ah *to_ah(struct ibv_ah *ibah)
{
    struct sib_ah *ah = ibah ? sib_container_of(ibah, struct sib_ah, ibah) : NULL;

    return ah && sib_obj_ok(&ah->o, SIB_K_AH) ? ah : NULL;
}

bool sib_ah_get(struct ibv_ah *ibah, struct ibv_ah_attr *out)
{
    struct sib_ah *ah = to_ah(ibah);

    if (!ah)
        return false;
    *out = ah->attr;
    return true;
}

struct ibv_ah *sib_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
    struct sib_pd *pd = sib_pd(ibpd);
    struct sib_ah *ah;
    int rc;

    if (!pd || !attr)
        return sib_null(EINVAL);
    rc = sib_check_ah_attr(attr);
    if (rc)
        return sib_null(rc);
    ah = calloc(1, sizeof(*ah));
    if (!ah)
        return sib_null(ENOMEM);
    ah->attr = *attr;
    ah->ibah.context = ibpd->context;
    ah->ibah.pd = ibpd;
    sib_obj_init(&ah->o, SIB_K_AH, ah);
    __atomic_fetch_add(&pd->users, 1, __ATOMIC_RELAXED);
    return &ah->ibah;
}

int sib_destroy_ah(struct ibv_ah *ibah)
{
    struct sib_ah *ah = to_ah(ibah);

    if (!ah)
        return sib_err(EINVAL);
    __atomic_fetch_sub(&sib_pd(ibah->pd)->users, 1, __ATOMIC_RELAXED);
    sib_obj_bury(sib_ctx(ibah->context), &ah->o);
    return 0;
}

int sib_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
                        struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
    struct sib_context *ctx = sib_ctx(context);

    if (!ctx || !wc || !ah_attr || port_num != 1)
        return sib_err(EINVAL);
    memset(ah_attr, 0, sizeof(*ah_attr));
    ah_attr->dlid = wc->slid;
    ah_attr->sl = wc->sl;
    ah_attr->src_path_bits = wc->dlid_path_bits;
    ah_attr->port_num = port_num;
    if (!(wc->wc_flags & IBV_WC_GRH))
        return 0;
    if (!grh)
        return sib_err(EINVAL);
    ah_attr->is_global = 1;
    ah_attr->grh.dgid = grh->sgid;
    ah_attr->grh.hop_limit = 0xff;
    ah_attr->grh.traffic_class = (uint8_t)(be32toh(grh->version_tclass_flow) >> 20);
    for (int i = 0; i < sib_gid_count(); i++) {
        union ibv_gid mine = sib_gid(ctx->lid, i);

        if (!memcmp(&mine, &grh->dgid, sizeof(mine))) {
            ah_attr->grh.sgid_index = (uint8_t)i;
            return 0;
        }
    }
    return sib_err(ENOENT); /* addressed to a GID we do not have */
}

struct ibv_ah *sib_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
                                     uint8_t port_num)
{
    struct ibv_ah_attr attr;

    if (!pd || sib_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
        return NULL;
    return sib_create_ah(pd, &attr);
}

/* Does gid name context `lid`? */
bool sib_gid_is(const union ibv_gid *gid, uint16_t lid)
{
    for (int i = 0; i < sib_gid_count(); i++) {
        union ibv_gid g = sib_gid(lid, i);

        if (!memcmp(&g, gid, sizeof(g)))
            return true;
    }
    return false;
}

/* Does the address vector reach the context owning the destination QP? */
bool sib_av_reaches(const struct ibv_ah_attr *av, uint32_t dest_ctx)
{
    const struct sib_fctx *fc = sib_fctx_at(&sib_fab, dest_ctx);
    uint16_t lid = (uint16_t)fc->lid;

    if (sib_fab.hdr->roce || av->is_global) {
        if (!av->is_global || !sib_gid_is(&av->grh.dgid, lid))
            return false;
    }
    return sib_fab.hdr->roce || av->dlid == lid;
}

/* The 40-byte GRH a UD receiver finds in front of the payload. */
void sib_grh_build(struct ibv_grh *grh, const struct ibv_ah_attr *av, uint16_t src_lid,
                   uint32_t paylen)
{
    union ibv_gid sgid = sib_gid(src_lid, av->grh.sgid_index);

    memset(grh, 0, sizeof(*grh));
    grh->version_tclass_flow = htobe32((6u << 28) | ((uint32_t)av->grh.traffic_class << 20) |
                                       (av->grh.flow_label & 0xfffff));
    grh->paylen = htobe16((uint16_t)paylen);
    grh->next_hdr = 0x1b; /* BTH */
    grh->hop_limit = av->grh.hop_limit;
    grh->sgid = sgid;
    grh->dgid = av->grh.dgid;
}
