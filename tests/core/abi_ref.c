/* The ABI facts of ARMCI-MPI's own armci.h (Debian libarmci-mpi-dev), the
 * header Global Arrays was compiled against. Built without our include
 * directory, so <armci.h> here is ARMCI-MPI's. */
#include <armci.h>

#include "abi_facts.h"

#ifndef ARMCI_MPI
#error "expected ARMCI-MPI's armci.h"
#endif

const struct abi_facts armci_mpi_facts = ABI_FACTS_INIT;
