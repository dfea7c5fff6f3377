/*
 * PARMCI profiling interface: every public ARMCI_X is a weak alias of the
 * implementation PARMCI_X, so a profiling library can define ARMCI_X and
 * forward to PARMCI_X.
 */
#ifndef ARMCI_API_PROFILING_H
#define ARMCI_API_PROFILING_H

#define ARMCI_PRAGMA_(x)   _Pragma(#x)
#define PROFILED(name)     ARMCI_PRAGMA_(weak ARMCI_##name = PARMCI_##name)
#define PROFILED_MSG(name) ARMCI_PRAGMA_(weak armci_msg_##name = parmci_msg_##name)

#endif
