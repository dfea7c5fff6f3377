/*
 * armci-info: what this libarmci is and how the environment configures it.
 *
 *   armci-info             version and the library's configuration table
 *   armci-info -c          every variable with its effective value here
 *   armci-info --markdown  the table as docs/ENVIRONMENT.md shows it
 *
 * Reads only the environment: no MPI job, no verbs device is needed.
 */
#include <stdio.h>
#include <string.h>

#include "armci.h"
#include "core/config.h"

static int usage(void)
{
    fprintf(stderr, "usage: armci-info [-c | --markdown]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc > 2)
        return usage();
    const char *mode = argc == 2 ? argv[1] : "";
    if (!strcmp(mode, "--markdown")) {
        config_dump(stdout, true);
        return 0;
    }
    if (*mode && strcmp(mode, "-c"))
        return usage();
    cfg_load();
    printf("ARMCI-ODCM %d.%d: ARMCI over InfiniBand verbs with on-demand connections\n",
           ARMCI_ODCM_VERSION_MAJOR, ARMCI_ODCM_VERSION_MINOR);
    printf("effective configuration (environment, else default):\n");
    config_dump(stdout, false);
    return 0;
}
