/* Environment parsing: one table, one parser per value kind. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"

struct config cfg;

static void bad_value(const char *name, const char *value, const char *expected)
{
    armci_die("ARMCI_Init", "environment variable %s=\"%s\" is invalid: expected %s", name, value,
              expected);
}

static long env_long(const char *name, long dflt, long min, long max)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (errno || *end || v < min || v > max) {
        char expected[96];
        snprintf(expected, sizeof(expected), "an integer in [%ld, %ld]", min, max);
        bad_value(name, s, expected);
    }
    return v;
}

static double env_double(const char *name, double dflt, double min, double max)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || v < min || v > max) {
        char expected[96];
        snprintf(expected, sizeof(expected), "a number in [%g, %g]", min, max);
        bad_value(name, s, expected);
    }
    return v;
}

static bool env_bool(const char *name, bool dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on"))
        return true;
    if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off"))
        return false;
    bad_value(name, s, "0/1, yes/no, true/false or on/off");
    return dflt;
}

/* Returns the index of the variable's value in `choices` (NULL-terminated). */
static int env_choice(const char *name, int dflt, const char *const *choices)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    for (int i = 0; choices[i]; i++)
        if (!strcasecmp(s, choices[i]))
            return i;
    char expected[128] = "one of";
    for (int i = 0; choices[i]; i++) {
        strncat(expected, " ", sizeof(expected) - strlen(expected) - 1);
        strncat(expected, choices[i], sizeof(expected) - strlen(expected) - 1);
    }
    bad_value(name, s, expected);
    return dflt;
}

void cfg_load(void)
{
    static const char *const verbs_choices[] = {"auto", "rdma-core", "softib", NULL};
    static const char *const connect_choices[] = {"ondemand", "static", NULL};
    static const char *const protocol_choices[] = {"overlap", "serial", NULL};
    static const char *const barrier_choices[] = {"rdma", "mpi", NULL};

    cfg.node_size = (int)env_long("ARMCI_NODE_SIZE", 0, 0, 1 << 20);
    cfg.verbose = env_bool("ARMCI_VERBOSE", false);
    cfg.verbs = env_choice("ARMCI_VERBS", CFG_VERBS_AUTO, verbs_choices);
    cfg.device = getenv("ARMCI_IB_DEVICE");
    if (cfg.device && !*cfg.device)
        cfg.device = NULL;
    cfg.port = (int)env_long("ARMCI_IB_PORT", 1, 1, 255);
    cfg.gid_index = (int)env_long("ARMCI_IB_GID_INDEX", -1, -1, 1 << 16);
    cfg.server_poll = env_bool("ARMCI_SERVER_POLL", false);
    cfg.send_wqes = (int)env_long("ARMCI_SEND_WQES", 64, 4, 1 << 14);
    cfg.server_credits = (int)env_long("ARMCI_SERVER_CREDITS", 8, 1, 1024);
    cfg.server_bufs = (int)env_long("ARMCI_SERVER_BUFS", 128, 4, 1 << 16);
    cfg.server_buf_size = (size_t)env_long("ARMCI_SERVER_BUF_SIZE", 65536, 1024, 1 << 24);
    cfg.bounce_size = (size_t)env_long("ARMCI_BOUNCE_SIZE", 65536, 1024, 1 << 26);
    cfg.bounce_count = (int)env_long("ARMCI_BOUNCE_COUNT", 32, 2, 1 << 16);
    cfg.connect = env_choice("ARMCI_CONNECT", CFG_CONNECT_ONDEMAND, connect_choices);
    cfg.protocol = env_choice("ARMCI_CONNECT_PROTOCOL", CFG_PROTOCOL_OVERLAP, protocol_choices);
    cfg.connect_timeout = env_double("ARMCI_CONNECT_TIMEOUT", 10.0, 0.001, 1e6);
    cfg.connect_rto = env_double("ARMCI_CONNECT_RETRY_US", 1000.0, 10.0, 1e8) * 1e-6;
    cfg.report = env_bool("ARMCI_CONN_REPORT", true);
    cfg.barrier = env_choice("ARMCI_BARRIER", CFG_BARRIER_RDMA, barrier_choices);
    cfg.strided_threshold = (size_t)env_long("ARMCI_STRIDED_THRESHOLD", 2048, 0, 1L << 40);
    cfg.test_hooks = env_long("ARMCI_TEST_HOOKS", 0, 0, 1L << 30);
}
