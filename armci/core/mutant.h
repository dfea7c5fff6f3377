/*
 * Mutation points for scripts/mutants.sh, which checks that the test suites
 * notice each of these small, deliberate bugs. A build with -Dmutant=NAME
 * defines ARMCI_MUTANT_NAME=1 and so compiles in the bug named NAME at its
 * `#if ARMCI_MUTANT_IS(NAME)` site; any other build compiles them all out.
 * The list of names and the tests that catch each is in docs/TESTING.md (Mutation check).
 */
#ifndef ARMCI_CORE_MUTANT_H
#define ARMCI_CORE_MUTANT_H

/* For #if only: an undefined ARMCI_MUTANT_x counts as 0 there. */
#define ARMCI_MUTANT_IS(name) (ARMCI_MUTANT_##name + 0)

#endif
