/*
 * Fatal errors and argument checks. Every message names the ARMCI call and,
 * for bad arguments, the argument, then the whole job is aborted.
 */
#ifndef ARMCI_CORE_ERROR_H
#define ARMCI_CORE_ERROR_H

#include <stdbool.h>
#include <stddef.h>

/* Prints "ARMCI error (rank R) in CALL: message" and aborts the job. */
void armci_die(const char *call, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/* Runs `fn` in armci_die before the job is aborted (cleanup of names in /dev/shm); idempotent. */
void armci_on_die(void (*fn)(void));

/* Non-fatal diagnostics on stderr, prefixed with the rank. */
void armci_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Printed only with ARMCI_VERBOSE=1 (the configuration tells: armci_log_enable). */
void armci_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void armci_log_enable(bool on);

/* Aborts when ptr is NULL. */
void check_ptr(const char *call, const char *arg, const void *ptr);
/*
 * Aborts when a local buffer is NULL, or NULL plus an offset (an unmapped
 * address below the program): touching it would be a segfault. Cheap for
 * every real buffer: only addresses below the program are looked up.
 */
void check_local(const char *call, const char *arg, const void *ptr);
/* The test check_local makes, without aborting. */
bool local_ptr_valid(const void *ptr);
/*
 * For error messages about strings that may lack a NUL (Fortran): copies
 * the start of s into out[size] (non-printable bytes as '?'), stopping at
 * a NUL or at the first unreadable byte without faulting. The first
 * `known` bytes are readable (used if the kernel refuses the safe copy).
 */
void safe_prefix(const char *s, size_t known, char *out, size_t size);
/* Aborts when value < 0. */
void check_nonneg(const char *call, const char *arg, long value);

#endif
