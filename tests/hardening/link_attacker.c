/*
 * A process that is not part of the job (same user or another one) finds
 * data-server sockets the way anybody can, in /proc/net/unix, connects and
 * sends what a real data server would act on: map a segment that does not
 * exist (used to abort the job), unmap, stop (used to hang it), a short
 * message and garbage. The message layout is written out here on purpose:
 * an attacker does not link the library.
 *
 * Usage: link_attacker [NAME_PREFIX]
 *
 * Exit 0: sockets were found and none of them answered anything.
 * Exit 1: some request was answered (the server acted on it).
 * Exit 2: no data-server socket was found (the test is not testing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct forged {
    int32_t type;
    uint32_t flags;
    uint64_t seg_id;
    uint64_t size;
    char name[96];
};

/* Sends one message; returns 1 if anything came back within 300 ms. */
static int answered(const char *abstract_name, const void *msg, size_t len)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(abstract_name);
    if (n + 1 > sizeof(sa.sun_path))
        return 0;
    memcpy(sa.sun_path + 1, abstract_name, n);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("socket");
        return 0;
    }
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    if (connect(fd, (struct sockaddr *)&sa, alen) != 0) {
        printf("  connect refused: %s\n", strerror(errno));
        close(fd);
        return 0;
    }
    int got = 0;
    if (send(fd, msg, len, MSG_NOSIGNAL) == (ssize_t)len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char reply[256];
        if (poll(&p, 1, 300) > 0 && recv(fd, reply, sizeof(reply), MSG_DONTWAIT) > 0)
            got = 1;
    }
    close(fd);
    return got;
}

/* argv[1], if given, limits the attack to sockets whose name starts with it (one job's). */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "armci-";
    FILE *f = fopen("/proc/net/unix", "r");
    if (!f) {
        perror("/proc/net/unix");
        return 2;
    }
    char line[512];
    int sockets = 0, answers = 0;
    while (fgets(line, sizeof(line), f)) {
        char *at = strstr(line, " @armci-");
        if (!at || !strstr(at, "-ds"))
            continue;
        char name[256];
        if (sscanf(at + 2, "%255s", name) != 1 || strncmp(name, only, strlen(only)) != 0)
            continue;
        sockets++;
        printf("found data-server socket @%s\n", name);
        struct forged map = {.type = 1, .seg_id = 1, .size = 1 << 20};
        snprintf(map.name, sizeof(map.name), "/armci-missing");
        struct forged unmap = {.type = 2, .seg_id = 1};
        struct forged stop = {.type = 4};
        char garbage[300];
        memset(garbage, 0xa5, sizeof(garbage));
        answers += answered(name, &map, sizeof(map));
        answers += answered(name, &unmap, sizeof(unmap));
        answers += answered(name, &stop, sizeof(stop));
        answers += answered(name, &stop, 4);
        answers += answered(name, garbage, sizeof(garbage));
    }
    fclose(f);
    printf("%d data-server sockets, %d answers\n", sockets, answers);
    if (sockets == 0)
        return 2;
    return answers ? 1 : 0;
}
