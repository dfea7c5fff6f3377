/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Another user's attempts on a running job's fabric file (run as that
 * user): open it to read or rewrite the MR table, truncate it, change its
 * mode, remove, rename or replace its name. Every attempt must be refused;
 * the exit status is the number that were not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int allowed;

static void attempt(const char *what, int rc)
{
    if (rc < 0) {
        printf("attacker: %s: refused (%s)\n", what, strerror(errno));
        return;
    }
    printf("attacker: %s: ALLOWED\n", what);
    allowed++;
}

static int opened(int fd)
{
    if (fd >= 0)
        close(fd);
    return fd;
}

int main(int argc, char **argv)
{
    char other[600];
    const char *path = argc > 1 ? argv[1] : NULL;

    if (!path) {
        fprintf(stderr, "usage: fabric_attacker FABRIC_PATH\n");
        return 100;
    }
    printf("attacker: uid %u on %s\n", (unsigned)getuid(), path);
    snprintf(other, sizeof(other), "%s.moved", path);
    attempt("open read-write", opened(open(path, O_RDWR)));
    attempt("open read-only", opened(open(path, O_RDONLY)));
    attempt("truncate", truncate(path, 0));
    attempt("chmod 0666", chmod(path, 0666));
    attempt("unlink", unlink(path));
    attempt("rename away", rename(path, other));
    attempt("symlink over it", symlink("/tmp", path));
    return allowed;
}
