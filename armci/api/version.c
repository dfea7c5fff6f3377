/* The version and build of the library itself, for programs and armci-info. */
#include "armci.h"

#ifndef ARMCI_ODCM_MPI
#define ARMCI_ODCM_MPI "unknown"
#endif
#ifdef ARMCI_FAULT_INJECTION
#define FAULT_INJECTION "1"
#else
#define FAULT_INJECTION "0"
#endif

void ARMCI_ODCM_Version(int *major, int *minor, int *patch)
{
    if (major)
        *major = ARMCI_ODCM_VERSION_MAJOR;
    if (minor)
        *minor = ARMCI_ODCM_VERSION_MINOR;
    if (patch)
        *patch = ARMCI_ODCM_VERSION_PATCH;
}

const char *ARMCI_ODCM_Build_info(void)
{
    return "mpi=" ARMCI_ODCM_MPI " fault_injection=" FAULT_INJECTION;
}
