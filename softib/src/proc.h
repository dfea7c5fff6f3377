/* SPDX-License-Identifier: BSD-3-Clause */
/* Processes by pid and start time (proc.c). */
#ifndef SIB_PROC_H
#define SIB_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool sib_pid_alive(int32_t pid, uint64_t start_time);
uint64_t sib_pidns(void); /* this process's pid namespace (inode), 0 if unknown */
uint64_t sib_pid_start_time(int32_t pid);
/* The start of /proc/<pid>/<file> (at most len - 1 bytes), NUL-terminated; false if unreadable. */
bool sib_proc_read(int32_t pid, const char *file, char *buf, size_t len);

#endif /* SIB_PROC_H */
