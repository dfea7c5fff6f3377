/*
 * Run-time choice of the verbs provider: rdma-core's libibverbs when an
 * active HCA port exists, softib otherwise (ARMCI_VERBS forces either).
 * The provider library is dlopen'ed with RTLD_LOCAL so that the ibv_*
 * symbols the application or MPI may use are never touched; the runtime's
 * own ibv_* calls are bound to it by provider.c.
 */
#ifndef ARMCI_VERBS_PROVIDER_H
#define ARMCI_VERBS_PROVIDER_H

#include "core/config.h"

/* Loads the provider; returns its name ("rdma-core" or "softib"). Aborts on failure. */
const char *verbs_provider_load(enum cfg_verbs choice);
void verbs_provider_unload(void);

#endif
