/*
 * Strided transfers to another node. Large chunks move as one RDMA each;
 * small ones are packed and handed to the target's data server.
 */
#ifndef ARMCI_TRANSPORT_STRIDED_REMOTE_H
#define ARMCI_TRANSPORT_STRIDED_REMOTE_H

#include <stdbool.h>

#include "transport/handle.h"
#include "transport/target.h"
#include "strided/stride.h"

void strided_remote_put(const struct target *t, const struct stride_desc *d, const char *src,
                        struct handle *req, bool blocking);
void strided_remote_get(const struct target *t, const struct stride_desc *d, char *dst,
                        struct handle *req, bool blocking);
void strided_remote_acc(const struct target *t, const struct stride_desc *d, int datatype,
                        const void *scale, const char *src, struct handle *req, bool blocking);

#endif
