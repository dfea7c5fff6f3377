/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Processes by pid: when one started (/proc/<pid>/stat), whether it is
 * still the same live process, and our pid namespace. Calls nothing else
 * of softib.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"

bool sib_proc_read(int32_t pid, const char *file, char *buf, size_t len)
{
    char path[64];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

/* Field 22 of /proc/<pid>/stat, or 0 if the process is gone or a zombie. */
uint64_t sib_pid_start_time(int32_t pid)
{
    char buf[1024];
    unsigned long long start = 0;
    char *p;

    if (!sib_proc_read(pid, "stat", buf, sizeof(buf)))
        return 0;
    p = strrchr(buf, ')'); /* comm may contain spaces and parentheses */
    if (!p || p[1] != ' ')
        return 0;
    if (p[2] == 'Z' || p[2] == 'X')
        return 0;
    /* after ") " come fields 3.. ; starttime is field 22 */
    if (sscanf(p + 2,
               "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
               "%*d %llu",
               &start) != 1)
        return 0;
    return start;
}

bool sib_pid_alive(int32_t pid, uint64_t start_time)
{
    if (pid <= 0)
        return false;
    if (kill(pid, 0) && errno == ESRCH)
        return false;
    return sib_pid_start_time(pid) == start_time;
}

uint64_t sib_pidns(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) ? 0 : (uint64_t)st.st_ino;
}
