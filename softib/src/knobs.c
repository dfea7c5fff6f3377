/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Environment knobs (read once per process), the clock, the random streams
 * used for loss/reordering, and the cost model. Every variable is listed in
 * docs/softib.md with its default.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "sib.h"

struct sib_knobs sib_knobs;

static pthread_mutex_t knobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t knobs_pid; /* a forked child reads its own environment again */
static int knobs_rc;

static int bad(const char *name, const char *val, const char *want)
{
    fprintf(stderr, "softib: %s=%s: expected %s\n", name, val, want);
    return EINVAL;
}

static int env_double01(const char *name, double *out)
{
    const char *v = getenv(name);
    char *end;
    double d;

    if (!v || !*v)
        return 0;
    errno = 0;
    d = strtod(v, &end);
    if (errno || *end || !(d >= 0.0 && d <= 1.0))
        return bad(name, v, "a probability between 0 and 1");
    *out = d;
    return 0;
}

static int env_u64(const char *name, uint64_t max, uint64_t *out, bool *given)
{
    const char *v = getenv(name);
    unsigned long long x;
    char *end;

    if (!v || !*v)
        return 0;
    errno = 0;
    x = strtoull(v, &end, 0);
    if (errno || *end || v[0] == '-' || x > max) {
        char want[64];
        snprintf(want, sizeof(want), "an integer from 0 to %llu", (unsigned long long)max);
        return bad(name, v, want);
    }
    *out = x;
    if (given)
        *given = true;
    return 0;
}

static int env_u32(const char *name, uint32_t max, uint32_t *out)
{
    uint64_t x = *out;
    int rc = env_u64(name, max, &x, NULL);

    *out = (uint32_t)x;
    return rc;
}

#define NAME_CHARS   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
#define NAME_MAX_LEN 64

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;

    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

/* The launcher's daemon on this node when it is Hydra's proxy: Hydra puts
 * no job identity in the environment, but starts every local process of a
 * job from one hydra_pmi_proxy. 0 otherwise. */
static pid_t hydra_proxy(void)
{
    char comm[32];
    pid_t ppid = getppid();

    if (!sib_proc_read(ppid, "comm", comm, sizeof(comm)))
        return 0;
    return strcmp(comm, "hydra_pmi_proxy\n") ? 0 : ppid;
}

/*
 * The job this process belongs to, as its launcher tells: the same string in
 * every process of one job on this node, a different one in any other job
 * running at the same time. Empty outside a launcher.
 */
static void job_identity(char *out, size_t len)
{
    const char *ompi = getenv("OMPI_MCA_ess_base_jobid");
    const char *key = getenv("OMPI_MCA_orte_precondition_transports");
    const char *pmix = getenv("PMIX_NAMESPACE");
    const char *sjob = getenv("SLURM_JOB_ID"), *sstep = getenv("SLURM_STEP_ID");
    pid_t proxy;

    out[0] = '\0';
    if (ompi && *ompi) {
        /* the job id is 16 bits of hashed mpirun pid and a counter; the
         * transport key, random per mpirun, tells colliding ones apart */
        if (key && *key)
            snprintf(out, len, "ompi-%s-%08x", ompi, (unsigned)fnv1a(key));
        else
            snprintf(out, len, "ompi-%s", ompi);
    } else if (pmix && *pmix) {
        snprintf(out, len, "pmix-%s", pmix);
    } else if (getenv("PMI_RANK") && (proxy = hydra_proxy())) {
        snprintf(out, len, "hydra-%d-%llu", (int)proxy,
                 (unsigned long long)sib_pid_start_time(proxy));
    } else if (sjob && *sjob && sstep && *sstep) {
        snprintf(out, len, "slurm-%s.%s", sjob, sstep);
    }
}

/* <uid>-<job> in the characters a name may have; a name that had to be
 * changed or shortened ends with a hash of the original, so that two jobs
 * never end up with the same name. */
static void job_fabric_name(const char *job, char *out, size_t len)
{
    char raw[256];
    size_t n;
    bool changed;

    snprintf(raw, sizeof(raw), "%u-%s", (unsigned)getuid(), job);
    n = strlen(raw);
    changed = n > NAME_MAX_LEN || strspn(raw, NAME_CHARS) != n;
    snprintf(out, len, "%.*s", changed ? NAME_MAX_LEN - 9 : NAME_MAX_LEN, raw);
    for (char *p = out; *p; p++)
        if (!strchr(NAME_CHARS, *p))
            *p = '_';
    if (changed)
        snprintf(out + strlen(out), len - strlen(out), "-%08x", (unsigned)fnv1a(raw));
}

static int load_fabric_name(void)
{
    const char *v = getenv("SOFTIB_FABRIC");
    char job[200], name[NAME_MAX_LEN + 1];
    uint64_t mb = 1024;

    if (v && *v) {
        if (strlen(v) > NAME_MAX_LEN || strspn(v, NAME_CHARS) != strlen(v))
            return bad("SOFTIB_FABRIC", v, "a name of up to 64 letters, digits, '.', '_', '-'");
        snprintf(name, sizeof(name), "%s", v);
    } else {
        /* one fabric per job: a stopped or dying process of one job cannot
         * hold up another, and jobs never see each other's tables */
        job_identity(job, sizeof(job));
        if (job[0])
            job_fabric_name(job, name, sizeof(name));
        else
            snprintf(name, sizeof(name), "%u", (unsigned)getuid());
    }
    snprintf(sib_knobs.fabric_path, sizeof(sib_knobs.fabric_path), "%s%s", SIB_FABRIC_PREFIX, name);
    if (env_u64("SOFTIB_FABRIC_MB", 1u << 20, &mb, NULL))
        return EINVAL;
    if (mb < 64)
        return bad("SOFTIB_FABRIC_MB", getenv("SOFTIB_FABRIC_MB"), "at least 64");
    sib_knobs.fabric_bytes = mb << 20;
    return 0;
}

static int load_port(void)
{
    const char *ll = getenv("SOFTIB_LINK_LAYER");
    uint64_t mtu = 4096;

    sib_knobs.mtu_enum = IBV_MTU_4096;
    if (env_u64("SOFTIB_MTU", 4096, &mtu, &sib_knobs.mtu_set))
        return EINVAL;
    switch (mtu) {
    case 256:
        sib_knobs.mtu_enum = IBV_MTU_256;
        break;
    case 512:
        sib_knobs.mtu_enum = IBV_MTU_512;
        break;
    case 1024:
        sib_knobs.mtu_enum = IBV_MTU_1024;
        break;
    case 2048:
        sib_knobs.mtu_enum = IBV_MTU_2048;
        break;
    case 4096:
        sib_knobs.mtu_enum = IBV_MTU_4096;
        break;
    default:
        return bad("SOFTIB_MTU", getenv("SOFTIB_MTU"), "256, 512, 1024, 2048 or 4096");
    }
    if (!ll || !*ll)
        return 0;
    sib_knobs.link_layer_set = true;
    if (!strcasecmp(ll, "ethernet") || !strcasecmp(ll, "roce"))
        sib_knobs.roce = true;
    else if (strcasecmp(ll, "infiniband") && strcasecmp(ll, "ib"))
        return bad("SOFTIB_LINK_LAYER", ll, "infiniband or ethernet");
    return 0;
}

static int load_cost(void)
{
    const char *model = getenv("SOFTIB_COST_MODEL");

    if (model && *model && strcmp(model, "none")) {
        if (strcmp(model, "paper"))
            return bad("SOFTIB_COST_MODEL", model, "none or paper");
        /* Vishnu et al.: create + RESET->INIT 367 us, INIT->RTR and
         * RTR->RTS about 105 us each. */
        sib_knobs.cost_create_qp_us = 300;
        sib_knobs.cost_init_us = 67;
        sib_knobs.cost_rtr_us = 105;
        sib_knobs.cost_rts_us = 105;
    }
    if (env_u32("SOFTIB_COST_CREATE_QP_US", 10000000, &sib_knobs.cost_create_qp_us) ||
        env_u32("SOFTIB_COST_INIT_US", 10000000, &sib_knobs.cost_init_us) ||
        env_u32("SOFTIB_COST_RTR_US", 10000000, &sib_knobs.cost_rtr_us) ||
        env_u32("SOFTIB_COST_RTS_US", 10000000, &sib_knobs.cost_rts_us) ||
        env_u32("SOFTIB_COST_DESTROY_QP_US", 10000000, &sib_knobs.cost_destroy_qp_us) ||
        env_u32("SOFTIB_COST_REG_MR_US", 10000000, &sib_knobs.cost_reg_mr_us))
        return EINVAL;
    return 0;
}

/* SOFTIB_PORT_DOWN=AT_MS:FOR_MS: this process's port goes down AT_MS after its device opens,
 * for FOR_MS. */
static int load_port_down(void)
{
    const char *v = getenv("SOFTIB_PORT_DOWN");
    unsigned long at, len;
    char *end;

    if (!v || !*v)
        return 0;
    errno = 0;
    at = strtoul(v, &end, 10);
    if (errno || end == v || *end != ':' || at > 86400000ul || v[0] == '-')
        return bad("SOFTIB_PORT_DOWN", v, "AT_MS:FOR_MS (milliseconds after the device opens)");
    v = end + 1;
    len = strtoul(v, &end, 10);
    if (errno || end == v || *end || len > 86400000ul || v[0] == '-')
        return bad("SOFTIB_PORT_DOWN", getenv("SOFTIB_PORT_DOWN"),
                   "AT_MS:FOR_MS (milliseconds after the device opens)");
    sib_knobs.port_down_at_ms = (uint32_t)at;
    sib_knobs.port_down_for_ms = (uint32_t)len;
    return 0;
}

static int load_traffic(void)
{
    uint64_t deferred = 0, ud_err_silent = 0, ud_deaf_reset = 0;

    if (env_double01("SOFTIB_UD_LOSS", &sib_knobs.ud_loss) ||
        env_double01("SOFTIB_UD_REORDER", &sib_knobs.ud_reorder) ||
        env_double01("SOFTIB_UD_DUP", &sib_knobs.ud_dup) ||
        env_double01("SOFTIB_RC_BREAK", &sib_knobs.rc_break) || load_port_down() ||
        env_u64("SOFTIB_DEFERRED", 1, &deferred, NULL) ||
        env_u64("SOFTIB_UD_ERR_SILENT", 1, &ud_err_silent, NULL) ||
        env_u64("SOFTIB_UD_DEAF_RESET", 1, &ud_deaf_reset, NULL) ||
        env_u64("SOFTIB_UD_SEND_STALL", UINT64_MAX, &sib_knobs.ud_send_stall, NULL) ||
        env_u64("SOFTIB_SEED", UINT64_MAX, &sib_knobs.seed, &sib_knobs.seeded) ||
        env_u32("SOFTIB_WIRE_LATENCY_US", 10000000, &sib_knobs.wire_latency_us) ||
        env_u32("SOFTIB_WIRE_MBPS", 100000000, &sib_knobs.wire_mbps))
        return EINVAL;
    sib_knobs.deferred = deferred != 0;
    sib_knobs.ud_err_silent = ud_err_silent != 0;
    sib_knobs.ud_deaf_reset = ud_deaf_reset != 0;
    return 0;
}

static int load_ptracer(void)
{
    const char *v = getenv("SOFTIB_PTRACER");

    if (!v || !*v || !strcmp(v, "parent"))
        return 0;
    if (strcmp(v, "any"))
        return bad("SOFTIB_PTRACER", v, "parent or any");
    sib_knobs.ptracer_any = true;
    return 0;
}

static void load(void)
{
    memset(&sib_knobs, 0, sizeof(sib_knobs));
    knobs_rc = load_fabric_name();
    if (!knobs_rc)
        knobs_rc = load_port();
    if (!knobs_rc)
        knobs_rc = load_cost();
    if (!knobs_rc)
        knobs_rc = load_traffic();
    if (!knobs_rc)
        knobs_rc = load_ptracer();
}

int sib_knobs_load(void)
{
    int rc;

    pthread_mutex_lock(&knobs_lock);
    if (knobs_pid != getpid()) {
        load();
        knobs_pid = getpid();
    }
    rc = knobs_rc;
    pthread_mutex_unlock(&knobs_lock);
    return rc;
}

uint64_t sib_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sib_cost(uint32_t us)
{
    static __thread bool precise;
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};

    if (!us)
        return;
    /* The default 50 us timer slack would add ~60 us to every modelled verb. */
    if (!precise) {
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        precise = true;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
        ;
}

bool sib_wire_model(void)
{
    return sib_knobs.wire_latency_us || sib_knobs.wire_mbps;
}

uint32_t sib_mtu_bytes(int mtu_enum)
{
    return mtu_enum >= IBV_MTU_256 && mtu_enum <= IBV_MTU_4096 ? 128u << mtu_enum : 0;
}

/* splitmix64: turns (seed, salt) into a well-mixed stream start. */
uint64_t sib_rng_seed(uint32_t salt)
{
    uint64_t z = (sib_knobs.seeded ? sib_knobs.seed : sib_now_ns() ^ ((uint64_t)getpid() << 32)) +
                 0x9e3779b97f4a7c15ull * (salt + 1);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}

/* xorshift64*, uniform in [0, 1) */
double sib_rng01(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}
