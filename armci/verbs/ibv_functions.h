/*
 * The libibverbs entry points the runtime calls, as an X-macro list:
 * X(return type, name, (parameters), (arguments)) for functions with a
 * result and XV(name, (parameters), (arguments)) for void ones. provider.c
 * turns it into a table filled by dlsym and into forwarding definitions.
 * The hot path (post_send, post_recv, poll_cq, ...) is not here: verbs.h
 * inlines it through the context's ops, which both providers fill.
 */
#ifndef ARMCI_VERBS_IBV_FUNCTIONS_H
#define ARMCI_VERBS_IBV_FUNCTIONS_H

#define IBV_FUNCTIONS(X, XV)                                                                       \
    X(struct ibv_device **, ibv_get_device_list, (int *num), (num))                                \
    XV(ibv_free_device_list, (struct ibv_device * *list), (list))                                  \
    X(const char *, ibv_get_device_name, (struct ibv_device * dev), (dev))                         \
    X(struct ibv_context *, ibv_open_device, (struct ibv_device * dev), (dev))                     \
    X(int, ibv_close_device, (struct ibv_context * ctx), (ctx))                                    \
    X(int, ibv_query_device, (struct ibv_context * ctx, struct ibv_device_attr * attr),            \
      (ctx, attr))                                                                                 \
    X(int, ibv_query_port,                                                                         \
      (struct ibv_context * ctx, uint8_t port, struct _compat_ibv_port_attr * attr),               \
      (ctx, port, attr))                                                                           \
    X(int, ibv_query_gid, (struct ibv_context * ctx, uint8_t port, int index, union ibv_gid *gid), \
      (ctx, port, index, gid))                                                                     \
    X(struct ibv_pd *, ibv_alloc_pd, (struct ibv_context * ctx), (ctx))                            \
    X(int, ibv_dealloc_pd, (struct ibv_pd * pd), (pd))                                             \
    X(struct ibv_mr *, ibv_reg_mr, (struct ibv_pd * pd, void *addr, size_t len, int access),       \
      (pd, addr, len, access))                                                                     \
    X(struct ibv_mr *, ibv_reg_mr_iova2,                                                           \
      (struct ibv_pd * pd, void *addr, size_t len, uint64_t iova, unsigned int access),            \
      (pd, addr, len, iova, access))                                                               \
    X(int, ibv_dereg_mr, (struct ibv_mr * mr), (mr))                                               \
    X(struct ibv_comp_channel *, ibv_create_comp_channel, (struct ibv_context * ctx), (ctx))       \
    X(int, ibv_destroy_comp_channel, (struct ibv_comp_channel * ch), (ch))                         \
    X(struct ibv_cq *, ibv_create_cq,                                                              \
      (struct ibv_context * ctx, int cqe, void *cq_context, struct ibv_comp_channel *ch, int vec), \
      (ctx, cqe, cq_context, ch, vec))                                                             \
    X(int, ibv_destroy_cq, (struct ibv_cq * cq), (cq))                                             \
    X(int, ibv_get_cq_event,                                                                       \
      (struct ibv_comp_channel * ch, struct ibv_cq * *cq, void **cq_context),                      \
      (ch, cq, cq_context))                                                                        \
    XV(ibv_ack_cq_events, (struct ibv_cq * cq, unsigned int n), (cq, n))                           \
    X(struct ibv_qp *, ibv_create_qp, (struct ibv_pd * pd, struct ibv_qp_init_attr * attr),        \
      (pd, attr))                                                                                  \
    X(int, ibv_modify_qp, (struct ibv_qp * qp, struct ibv_qp_attr * attr, int mask),               \
      (qp, attr, mask))                                                                            \
    X(int, ibv_query_qp,                                                                           \
      (struct ibv_qp * qp, struct ibv_qp_attr * attr, int mask, struct ibv_qp_init_attr *init),    \
      (qp, attr, mask, init))                                                                      \
    X(int, ibv_destroy_qp, (struct ibv_qp * qp), (qp))                                             \
    X(struct ibv_srq *, ibv_create_srq, (struct ibv_pd * pd, struct ibv_srq_init_attr * attr),     \
      (pd, attr))                                                                                  \
    X(int, ibv_modify_srq, (struct ibv_srq * srq, struct ibv_srq_attr * attr, int mask),           \
      (srq, attr, mask))                                                                           \
    X(int, ibv_destroy_srq, (struct ibv_srq * srq), (srq))                                         \
    X(struct ibv_ah *, ibv_create_ah, (struct ibv_pd * pd, struct ibv_ah_attr * attr), (pd, attr)) \
    X(int, ibv_destroy_ah, (struct ibv_ah * ah), (ah))                                             \
    X(int, ibv_get_async_event, (struct ibv_context * ctx, struct ibv_async_event * ev),           \
      (ctx, ev))                                                                                   \
    XV(ibv_ack_async_event, (struct ibv_async_event * ev), (ev))                                   \
    X(const char *, ibv_wc_status_str, (enum ibv_wc_status status), (status))                      \
    X(const char *, ibv_event_type_str, (enum ibv_event_type ev), (ev))                            \
    X(const char *, ibv_port_state_str, (enum ibv_port_state st), (st))

#endif
