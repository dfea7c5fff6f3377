/*
 * randomaccess: HPCC RandomAccess (GUPS) in the ARMCI style of the ODCM
 * paper. A global table of 2^L 64-bit words lives in ARMCI memory, spread
 * cyclically (word i on process i mod P). Each process generates its share of
 * the HPCC pseudo-random stream, buckets a batch of updates (1024 by default,
 * the paper's coalescing factor) by target process and sends each bucket as
 * one ARMCI_AccV of ARMCI_ACC_LNG (or, with -m acc, one ARMCI_Acc per update).
 *
 * ARMCI has no XOR accumulate, so this is HPCC's "add" variant:
 * table[ran mod 2^L] += ran >> 16. Addition commutes, so the final table does
 * not depend on the order updates arrive in, and keeping only 48 bits of the
 * value means no word can overflow a signed long: the expected table is exact.
 * Verification replays the whole stream on every process, applies the updates
 * that land in its own slice, and compares the slice word for word; unlike
 * HPCC's 1% tolerance for racing XORs, a single wrong word is a failure.
 */
#include "app_common.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "usage: randomaccess [-l LOG2_WORDS] [-u UPDATES_PER_WORD] [-b BATCH]"
                            " [-m accv|acc]\n"
                            "  -l LOG2_WORDS        global table of 2^L words (default 20)\n"
                            "  -u UPDATES_PER_WORD  updates = this x table words (default 4)\n"
                            "  -b BATCH             updates coalesced per batch (default 1024)\n"
                            "  -m MODE              accv: one ARMCI_AccV per target and batch;\n"
                            "                       acc: one ARMCI_Acc per update (default accv)\n";

enum ra_mode { RA_ACCV, RA_ACC };

struct ra_options {
    int log_words, updates_per_word, batch;
    enum ra_mode mode;
};

/* The distributed table: word i lives on process i % nproc at slot i / nproc. */
struct ra_table {
    uint64_t words; /* a power of two */
    int nproc, me;
    uint64_t local_words;
    void **bases;
};

/* One batch of updates, grouped by target process for the vector accumulates. */
struct ra_batch {
    uint64_t *ran;      /* stream values in generation order */
    long *value;        /* update values, grouped by target */
    void **src, **dst;  /* AccV segment addresses, grouped by target */
    int *count, *first; /* per target: updates in the batch, index of its first */
};

static enum ra_mode parse_mode(const char *text)
{
    if (strcmp(text, "accv") == 0)
        return RA_ACCV;
    if (strcmp(text, "acc") == 0)
        return RA_ACC;
    app_usage_error("randomaccess", usage, "-m must be accv or acc, got '%s'", text);
}

static struct ra_options parse_options(int argc, char **argv)
{
    struct ra_options opt = {.log_words = 20, .updates_per_word = 4, .batch = 1024};
    int c;
    opterr = 0; /* every rank would print getopt's message; rank 0 reports below */
    while ((c = getopt(argc, argv, "l:u:b:m:h")) != -1) {
        switch (c) {
        case 'l':
            /* 2^27 words keep one process's slice under 2 GiB, the largest ARMCI_Get */
            opt.log_words = (int)app_parse_long("randomaccess", "-l", optarg, 1, 27);
            break;
        case 'u':
            opt.updates_per_word = (int)app_parse_long("randomaccess", "-u", optarg, 1, 64);
            break;
        case 'b':
            opt.batch = (int)app_parse_long("randomaccess", "-b", optarg, 1, 1 << 20);
            break;
        case 'm':
            opt.mode = parse_mode(optarg);
            break;
        default:
            app_usage_error("randomaccess", usage, "unknown option or missing value: -%c", optopt);
        }
    }
    if (optind < argc)
        app_usage_error("randomaccess", usage, "unexpected argument '%s'", argv[optind]);
    return opt;
}

/* ---- the HPCC random stream ------------------------------------------------------------ */

/*
 * Element n of the stream is x^n in GF(2)[x] modulo x^64 + x^2 + x + 1, so one
 * step is a shift that folds the bit leaving at the top back in as 0x7.
 */
#define RA_POLY 0x7ULL

static uint64_t stream_next(uint64_t x)
{
    return (x << 1) ^ ((int64_t)x < 0 ? RA_POLY : 0);
}

/* Squaring in GF(2)[x] sends bit j to x^(2j); squares[j] holds x^(2j) reduced. */
static uint64_t gf2_square(uint64_t v, const uint64_t squares[64])
{
    uint64_t r = 0;
    for (int j = 0; j < 64; j++)
        if ((v >> j) & 1)
            r ^= squares[j];
    return r;
}

/*
 * Element n of the stream (element 0 is 1) by square-and-multiply, so each
 * process jumps straight to its share. Update u of the run uses element u + 1,
 * as in HPCC: the stream is advanced before each use.
 */
static uint64_t stream_at(uint64_t n)
{
    uint64_t squares[64];
    uint64_t v = 1;
    for (int j = 0; j < 64; j++) {
        squares[j] = v;
        v = stream_next(stream_next(v));
    }
    uint64_t r = 1;
    for (int bit = 63; bit >= 0; bit--) {
        r = gf2_square(r, squares);
        if ((n >> bit) & 1)
            r = stream_next(r);
    }
    return r;
}

/* The word an update goes to: the low bits of its stream value. */
static uint64_t table_index(const struct ra_table *t, uint64_t ran)
{
    return ran & (t->words - 1);
}

/* The added value: 48 bits, so a word can take 2^15 updates without overflowing a long. */
static long update_value(uint64_t ran)
{
    return (long)(ran >> 16);
}

/* ---- table ----------------------------------------------------------------------------- */

static int word_owner(const struct ra_table *t, uint64_t idx)
{
    return (int)(idx % (uint64_t)t->nproc);
}

static size_t word_offset(const struct ra_table *t, uint64_t idx)
{
    return (size_t)(idx / (uint64_t)t->nproc) * sizeof(long);
}

/* Global index of slot s of this process. */
static uint64_t slot_index(const struct ra_table *t, uint64_t s)
{
    return s * (uint64_t)t->nproc + (uint64_t)t->me;
}

static struct ra_table table_create(int log_words)
{
    struct ra_table t = {.words = 1ULL << log_words};
    t.nproc = armci_msg_nproc();
    t.me = armci_msg_me();
    uint64_t n = (uint64_t)t.nproc, me = (uint64_t)t.me;
    t.local_words = t.words > me ? (t.words - me + n - 1) / n : 0;
    t.bases = app_malloc_global(t.local_words * sizeof(long));
    return t;
}

static void table_destroy(struct ra_table *t)
{
    app_free_global(t->bases);
    t->bases = NULL;
}

/* The HPCC starting table: word i holds i. */
static void initial_slice(const struct ra_table *t, long *slice)
{
    for (uint64_t s = 0; s < t->local_words; s++)
        slice[s] = (long)slot_index(t, s);
}

/* Collective: every process writes its initial slice. */
static void table_init(const struct ra_table *t)
{
    long *slice = app_xmalloc(t->local_words * sizeof(long));
    initial_slice(t, slice);
    if (t->local_words > 0 &&
        ARMCI_Put(slice, t->bases[t->me], (int)(t->local_words * sizeof(long)), t->me) != 0)
        app_die("ARMCI_Put of the initial table slice failed");
    free(slice);
    ARMCI_Barrier();
}

/* ---- updates --------------------------------------------------------------------------- */

static struct ra_batch batch_create(int cap, int nproc)
{
    struct ra_batch b;
    b.ran = app_xmalloc(sizeof(uint64_t) * (size_t)cap);
    b.value = app_xmalloc(sizeof(long) * (size_t)cap);
    b.src = app_xmalloc(sizeof(void *) * (size_t)cap);
    b.dst = app_xmalloc(sizeof(void *) * (size_t)cap);
    b.count = app_xmalloc(sizeof(int) * (size_t)nproc);
    b.first = app_xmalloc(sizeof(int) * (size_t)nproc);
    return b;
}

static void batch_destroy(struct ra_batch *b)
{
    free(b->ran);
    free(b->value);
    free(b->src);
    free(b->dst);
    free(b->count);
    free(b->first);
}

/* Generates n updates from *state and groups them by target (a counting sort). */
static void batch_fill(const struct ra_table *t, struct ra_batch *b, uint64_t *state, int n)
{
    memset(b->count, 0, sizeof(int) * (size_t)t->nproc);
    for (int i = 0; i < n; i++) {
        *state = stream_next(*state);
        b->ran[i] = *state;
        b->count[word_owner(t, table_index(t, *state))]++;
    }
    int next = 0;
    for (int p = 0; p < t->nproc; p++) {
        b->first[p] = next;
        next += b->count[p];
    }
    for (int i = 0; i < n; i++) {
        uint64_t idx = table_index(t, b->ran[i]);
        int slot = b->first[word_owner(t, idx)]++; /* first[] is a cursor here... */
        b->value[slot] = update_value(b->ran[i]);
        b->src[slot] = &b->value[slot];
        b->dst[slot] = app_remote_addr(t->bases, word_owner(t, idx), word_offset(t, idx));
    }
    for (int p = 0; p < t->nproc; p++)
        b->first[p] -= b->count[p]; /* ...and back to each group's start */
}

/* One ARMCI_AccV per target: the batch's updates for it as 8-byte segments. */
static void send_vector(const struct ra_batch *b, int target)
{
    long one = 1;
    armci_giov_t iov = {.src_ptr_array = &b->src[b->first[target]],
                        .dst_ptr_array = &b->dst[b->first[target]],
                        .bytes = sizeof(long),
                        .ptr_array_len = b->count[target]};
    if (ARMCI_AccV(ARMCI_ACC_LNG, &one, &iov, 1, target) != 0)
        app_die("ARMCI_AccV of %d updates to %d failed", b->count[target], target);
}

/* One ARMCI_Acc per update: no coalescing, for comparison. */
static void send_each(const struct ra_batch *b, int target)
{
    long one = 1;
    for (int i = b->first[target]; i < b->first[target] + b->count[target]; i++)
        if (ARMCI_Acc(ARMCI_ACC_LNG, &one, b->src[i], b->dst[i], sizeof(long), target) != 0)
            app_die("ARMCI_Acc of one update to %d failed", target);
}

static void batch_send(const struct ra_batch *b, int nproc, enum ra_mode mode)
{
    for (int p = 0; p < nproc; p++) {
        if (b->count[p] == 0)
            continue;
        if (mode == RA_ACCV)
            send_vector(b, p);
        else
            send_each(b, p);
    }
}

/* Collective: applies this process's share [first, first + count) of the updates. */
static void run_updates(const struct ra_table *t, const struct ra_options *opt, uint64_t first,
                        uint64_t count)
{
    struct ra_batch b = batch_create(opt->batch, t->nproc);
    uint64_t state = stream_at(first);
    for (uint64_t done = 0; done < count;) {
        int n = count - done < (uint64_t)opt->batch ? (int)(count - done) : opt->batch;
        batch_fill(t, &b, &state, n);
        batch_send(&b, t->nproc, opt->mode);
        done += (uint64_t)n;
    }
    batch_destroy(&b);
    ARMCI_Barrier(); /* completes every accumulate everywhere */
}

/* ---- verification ---------------------------------------------------------------------- */

/* This process's slice after all `total` updates, replayed from the start of the stream. */
static void expected_slice(const struct ra_table *t, uint64_t total, long *slice)
{
    initial_slice(t, slice);
    uint64_t ran = stream_at(0);
    for (uint64_t u = 0; u < total; u++) {
        ran = stream_next(ran);
        uint64_t idx = table_index(t, ran);
        if (word_owner(t, idx) == t->me)
            slice[word_offset(t, idx) / sizeof(long)] += update_value(ran);
    }
}

/* Collective: the number of table words, over all processes, that differ from the replay. */
static long count_errors(const struct ra_table *t, uint64_t total)
{
    size_t bytes = t->local_words * sizeof(long);
    long *expected = app_xmalloc(bytes);
    long *actual = app_xmalloc(bytes);
    expected_slice(t, total, expected);
    if (bytes > 0 && ARMCI_Get(t->bases[t->me], actual, (int)bytes, t->me) != 0)
        app_die("ARMCI_Get of the table slice failed");
    long errors = 0;
    for (uint64_t s = 0; s < t->local_words; s++)
        errors += actual[s] != expected[s];
    free(expected);
    free(actual);
    armci_msg_lgop(&errors, 1, "+");
    return errors;
}

/* ---- driver ---------------------------------------------------------------------------- */

static void report(const struct ra_table *t, const struct ra_options *opt, uint64_t total,
                   double seconds, long errors, uint64_t digest)
{
    if (t->me != 0)
        return;
    const char *mode = opt->mode == RA_ACCV ? "accv" : "acc";
    double gups = (double)total / seconds * 1e-9;
    printf("RandomAccess (add variant), table 2^%d words, %" PRIu64 " updates, %d processes\n",
           opt->log_words, total, t->nproc);
    printf("  batch %d, mode %s: time %.4f s, %.6f GUP/s; %ld wrong words: %s\n", opt->batch, mode,
           seconds, gups, errors, errors == 0 ? "PASS" : "FAIL");
    printf("RESULT app=randomaccess procs=%d log2_words=%d updates=%" PRIu64
           " batch=%d mode=%s time_s=%.6f gups=%.6f errors=%ld digest=%016" PRIx64 " check=%s\n",
           t->nproc, opt->log_words, total, opt->batch, mode, seconds, gups, errors, digest,
           errors == 0 ? "PASS" : "FAIL");
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    struct ra_options opt = parse_options(argc, argv);
    struct ra_table t = table_create(opt.log_words);
    table_init(&t);

    uint64_t total = (uint64_t)opt.updates_per_word << opt.log_words;
    uint64_t first = total * (uint64_t)t.me / (uint64_t)t.nproc;
    uint64_t last = total * (uint64_t)(t.me + 1) / (uint64_t)t.nproc;

    double t0 = app_now();
    run_updates(&t, &opt, first, last - first);
    double seconds = app_max_over_procs(app_now() - t0);

    long errors = count_errors(&t, total);
    uint64_t digest = app_digest(t.bases[t.me], t.local_words * sizeof(long));
    report(&t, &opt, total, seconds, errors, digest);

    table_destroy(&t);
    ARMCI_Finalize();
    return errors == 0 ? 0 : 1;
}
