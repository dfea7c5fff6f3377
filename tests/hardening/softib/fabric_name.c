/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_name [SECONDS]: opens the verbs device, prints the fabric file it
 * joined ("fabric PATH"), stays on it for SECONDS (so that jobs overlap),
 * and closes. With $SOFTIB_INFO set, also checks that `softib-info -l`
 * (which looks for every fabric of ours) lists that file.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *tool = getenv("SOFTIB_INFO");
    double secs = argc > 1 ? atof(argv[1]) : 0;
    char path[256];
    struct t_dev d;

    t_dev_open(&d);
    REQUIRE(t_fabric_path(path, sizeof(path)), "the fabric is mapped");
    printf("fabric %s\n", path);
    fflush(stdout);
    if (tool && *tool) {
        char cmd[512], line[512];
        bool listed = false;
        FILE *p;

        snprintf(cmd, sizeof(cmd), "env -u SOFTIB_FABRIC %s -l", tool);
        p = popen(cmd, "r");
        REQUIRE(p, "popen %s", cmd);
        while (fgets(line, sizeof(line), p))
            listed |= strncmp(line, path, strlen(path)) == 0 && line[strlen(path)] == '\t';
        pclose(p);
        CHECK(listed, "softib-info -l lists %s", path);
    }
    if (secs > 0)
        usleep((useconds_t)(secs * 1e6));
    t_dev_close(&d);
    return t_failed ? 1 : 0;
}
